/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kt_churn - the churn tests (tests/vm/prefetch_churn.c on x86,
 * tests/arm64/prefetch_churn.c on arm64) but for how they run a vCPU,
 * zap host memory and set up the VM: their threads, bookkeeping and
 * verdicts.  Built with kt_core: tests/vm's build links kt_churn.c,
 * tests/arm64/lib/churn.c includes it.
 *
 * Slot 1: each worker vCPU owns a range of pages.  A round is: the host
 * writes tag T into the first word of every page of the range, the guest
 * reads them, the guest writes T', the host reads them; a zapper
 * meanwhile invalidates random pages.  A read may give the tag written,
 * or 0 if a zap of that page started after the last zap of it that had
 * completed when the tag was written (per-page started/done counters,
 * snapshot at the write).  Anything else is a mapping that outlived an
 * invalidation.  After the churn each worker does one quiet round, in
 * which no 0 is legal.
 *
 * Slot 2: a mover deletes the slot and adds it back on new host memory
 * holding the next generation's tag, while a reader vCPU reads it page
 * by page.  A read during one KVM_RUN must give the tag of a generation
 * that was not yet deleted when the KVM_RUN began and whose add had
 * begun when it returned; an MMIO exit is legal only if a delete had
 * started and the re-add had not finished.
 */
#ifndef KT_CHURN_H
#define KT_CHURN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define KC_MAX_REPORTS	8		/* FAIL lines per worker */
#define KC_MAX_WORKERS	4
#define KC_GEN_TAG(g)	(0x70000000u | ((uint32_t)(g) & 0xffffff))

/* xorshift64: the churn's random numbers, reproducible per seed. */
uint32_t kc_rnd(uint64_t *s);

struct kc_churn;

/* A vCPU of slot 1. */
struct kc_worker {
	struct kc_churn *c;
	void *vcpu;			/* the arch's */
	int idx, vcpu_id;
	int phase;			/* 0 host writes, 1 guest reads, 2 guest writes */
	uint64_t iterations, zeros_guest, zeros_host, bad;
	uint32_t *snap;			/* done counts at the last write */
	uint32_t t, t2;			/* this round's tags */
};

/* The vCPU of slot 2. */
struct kc_reader {
	struct kc_churn *c;
	void *vcpu;
	uint64_t reads, mmio, passes, bad;
	uint64_t min_gen, max_gen;
};

/* The generation counters around one KVM_RUN of the reader. */
struct kc_run {
	uint64_t del_done0, add_done0, del_started1, add_started1;
};

struct kc_churn {
	/* Set by the test before kc_init(). */
	int nr_workers;
	uint64_t range_pages, page_size;
	uint64_t gen_size;		/* slot 2's size */
	/* One round of worker @w (kc_round_*() around its guest passes). */
	void (*round)(struct kc_worker *w);
	/* One pass of the reader over slot 2 (kc_run_*(), kc_read_*()). */
	void (*pass)(struct kc_reader *rd);
	/* The zapper's loop, until kc_stopping(). */
	void (*zapper)(struct kc_churn *c);
	/* Delete slot 2; add it back on @mem. */
	void (*del)(void);
	void (*add)(char *mem);

	/* Slot 1: its host memory and gpa; per page, zaps started, done. */
	char *mem;
	uint64_t gpa, pages;
	uint32_t *started, *done;
	uint64_t nr_zaps, nr_zapped;
	struct kc_worker w[KC_MAX_WORKERS];

	/* Slot 2's generations, and the live one's memory. */
	uint64_t del_started, del_done, add_started, add_done, nr_gens;
	char *gen_mem;
	struct kc_reader rd;

	pthread_t t[KC_MAX_WORKERS + 3];
	int nr_threads, stop, stopped;
};

/*
 * A test's struct kc_churn, with its functions named as both tests name
 * them: zap_round(), move_pass(), zapper(), move_del() and move_add().
 */
#define KC_CHURN(workers, range, page, size) {				\
	.nr_workers = (workers), .range_pages = (range),		\
	.page_size = (page), .gen_size = (size), .round = zap_round,	\
	.pass = move_pass, .zapper = zapper, .del = move_del,		\
	.add = move_add }

/*
 * Slot 1 on @mem at @gpa, and generation 1 of slot 2 (c->add()ed here);
 * the workers on @vcpus[0..nr_workers), the reader on @vcpus[nr_workers]
 * (@ids: their vCPU ids).
 */
void kc_init(struct kc_churn *c, char *mem, uint64_t gpa, void **vcpus,
	     const int *ids);

/*
 * All threads for @min_s s, and on until @enough() (at most @max_s s in
 * all); then stop them.  A thread that has not stopped @stop_s s later
 * (a vCPU that never comes back from KVM_RUN) is a FAIL, after a line
 * on where each was, and ends the program.  Then the quiet rounds.
 */
void kc_churn(struct kc_churn *c, int min_s, int max_s,
	      bool (*enough)(struct kc_churn *c), int stop_s);
bool kc_stopping(struct kc_churn *c);

/* Pages [@first, @first + @len) of slot 1 are being zapped / have been. */
void kc_zap_begin(struct kc_churn *c, uint64_t first, uint64_t len);
void kc_zap_end(struct kc_churn *c, uint64_t first, uint64_t len);
/* The first page of @w's range, and its guest physical address. */
uint64_t kc_first(const struct kc_worker *w);
uint64_t kc_gpa0(const struct kc_worker *w);

/* A round: the host writes T (phase 0, then 1). */
void kc_round_host_write(struct kc_worker *w);
/* The guest reported @v, not T, at @page (an index into slot 1). */
void kc_guest_read(struct kc_worker *w, uint64_t page, uint32_t v);
/* Before the guest's write pass (phase 2). */
void kc_round_guest_writes(struct kc_worker *w);
/* After it: the host reads T' (or a legal 0) everywhere; round done. */
void kc_round_host_check(struct kc_worker *w);

void kc_run_begin(struct kc_reader *rd, struct kc_run *r);
void kc_run_end(struct kc_reader *rd, struct kc_run *r);
/* The run of @r ended in an MMIO read of slot 2 at @gpa. */
void kc_read_mmio(struct kc_reader *rd, const struct kc_run *r,
		  uint64_t gpa);
/* The run of @r ended with the guest reporting @v read at @gpa. */
void kc_read_tag(struct kc_reader *rd, const struct kc_run *r,
		 uint64_t gpa, uint32_t v);

/*
 * The "# " lines of the run and its checks: no bad read anywhere, and at
 * least @min_zaps zaps, 2 rounds per worker, a 0 seen by a guest, 3
 * passes over slot 2, an MMIO exit, 10 generations, pages prefetched
 * (@stat: a vCPU stat summed over the VM's vCPUs) and @extra_ok (@extra:
 * what it is, for the message).
 */
void kc_report(const struct kc_churn *c, uint64_t (*stat)(const char *name),
	       const char *zap_what, uint64_t min_zaps, bool extra_ok,
	       const char *extra);

/* Slot 2's last memory, once it is deleted for good. */
void kc_free(struct kc_churn *c);

#endif /* KT_CHURN_H */
