/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kt_bench - the core of the restore benchmark (tests/bench/bench.c) and
 * of its smoke test (tests/vm/restore_smoke.c).
 *
 * One run: a fresh VM (in guest mode cfg->mode) with a data memslot of @size bytes whose host memory
 * is armed with userfaultfd (MISSING mode, private anonymous memory,
 * MADV_NOHUGEPAGE); a kt_uffd handler thread populates chunks of @chunk
 * bytes on demand with UFFDIO_COPY from a source buffer, as a VMM
 * restoring a snapshot does. The guest (one or more vCPUs, disjoint equal
 * parts) writes one dword into every 4 KiB page, linearly. Measured: the
 * wall time of that pass, the userfaultfd events, the vCPUs' pf_taken,
 * prefetch_windows and prefetch_mapped, then the time of a second pass
 * over the now populated and mapped memory (the limit: the guest's own
 * work). Last, every page's contents are verified.
 *
 * With @populated set there is no userfaultfd: the memory is filled from
 * the source before the pass (populated but not mapped), which isolates
 * the cost of guest faults and of prefetch itself.
 *
 * All symbols start with ktb_ / KTB_.
 */
#ifndef KT_BENCH_H
#define KT_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "kvmtest.h"

#define KTB_DATA_SLOT	1
#define KTB_DATA_GPA	0x400000ULL	/* 4 MiB: 2 MiB aligned */
#define KTB_MAX_VCPUS	8

struct ktb_config {
	const char *policy;	/* NULL: do not set (stock modules) */
	uint32_t nr_pages;	/* for KVM_SET_PREFETCH_POLICY */
	uint32_t gup;		/* KVM_PREFETCH_GUP_* */
	unsigned int vcpus;	/* 0 or 1: one vCPU */
	bool populated;		/* no userfaultfd: memory filled up front */
	/*
	 * pin: run the vCPU thread(s) and the handler thread on CPU @cpu
	 * (of the machine running the benchmark). A fault then hands over
	 * to the handler with a local context switch; a cross-CPU wakeup
	 * costs milliseconds when the (TCG-emulated) CPUs compete for
	 * host cores.
	 */
	bool pin;
	int cpu;
	enum kt_guest_mode mode;	/* KT_GUEST_PLAIN (0) by default */
	/*
	 * minor: the zero-copy restore. The memory is a shared memfd whose
	 * page cache already holds the snapshot; the handler registers
	 * MINOR mode and maps each chunk with UFFDIO_CONTINUE (no copy).
	 */
	bool minor;
};

struct ktb_result {
	double ms;		/* first pass (the restore), wall time */
	double limit_ms;	/* second pass over mapped memory */
	double copy_ms;		/* handler CPU time in UFFDIO_COPY, 1st pass */
	uint64_t pages;
	uint64_t chunks;	/* size / chunk (0 if populated) */
	uint64_t events;	/* userfaultfd events */
	uint64_t dup;		/* populate attempts that hit EEXIST */
	uint64_t filled;	/* chunks populated by the handler */
	uint64_t pf;		/* pf_taken, first pass, all vCPUs */
	uint64_t pf2;		/* pf_taken, second pass */
	bool have_prefetch;	/* the prefetch_* stats exist */
	uint64_t windows;	/* prefetch_windows, first pass */
	uint64_t mapped;	/* prefetch_mapped, first pass */
	/*
	 * The VM's prefetch usage after the pass (prefetch_used,
	 * _unused, _untouched, _avoided), where KVM has the stats.
	 */
	bool have_usage;
	uint64_t used, unused, untouched, avoided;
	uint64_t bad_pages;	/* pages with wrong contents */
	/* Proof of async #PF (first pass, all vCPUs). */
	uint64_t halt_wakeup;	/* vCPU stat halt_wakeup */
	uint64_t apf_not_present; /* pv-apf: guest's "page not present" */
	uint64_t apf_ready;	/* pv-apf: guest's "page ready" */
	uint64_t apf_early;	/* pv-apf: of those, taken before the hlt */
	uint64_t apf_spurious;	/* pv-apf: "page ready" with an empty slot */
	bool ok;		/* no error at all (then err is empty) */
	char err[160];
};

/*
 * The source buffer of @size bytes: every page distinct, no zero page.
 * Dword 0 of each page is overwritten by the guest (with the page's
 * gpa), the rest must arrive unchanged.
 */
char *ktb_src_alloc(uint64_t size);
void ktb_src_free(char *src, uint64_t size);

/*
 * One run as described above. Returns 0 and fills @r (r->ok false if the
 * contents or the handler were wrong: an error, not a number); returns
 * -errno if the policy could not be set. Other failures end the program
 * with a FAIL line (library asserts).
 */
int ktb_run(const char *src, uint64_t size, uint64_t chunk,
	    const struct ktb_config *cfg, struct ktb_result *r);

/*
 * The random-access workload (issue 8's second target): memory of @size
 * bytes populated up front (no userfaultfd), one vCPU; the guest writes
 * dword 0 of @touches distinct pages, in an order given by a Fisher-Yates
 * shuffle seeded with @seed (the same pages in the same order for every
 * configuration), one KVM_RUN per page. Fills ms (all touches), pages
 * (= @touches), pf, windows and mapped; verifies every page (touched ones
 * hold their gpa, the others are the source). cfg->populated and
 * cfg->vcpus are ignored. Returns like ktb_run().
 */
int ktb_run_random(const char *src, uint64_t size, uint64_t touches,
		   uint32_t seed, const struct ktb_config *cfg,
		   struct ktb_result *r);

/*
 * rmmod every loaded kvm_prefetch_* policy module (they pin kvm.ko), then
 * "kvm-reload @which" through ktsys_reload(); all VMs must be closed.
 * Returns kvm-reload's exit status.
 */
int ktb_swap_modules(const char *which);

/*
 * Read @vm's prefetch usage stats into @r (have_usage false, counts 0,
 * where KVM has none).
 */
void ktb_usage_read(struct kt_vm *vm, struct ktb_result *r);

/* Median of @n doubles (sorts @v). */
double ktb_median(double *v, unsigned int n);

#endif /* KT_BENCH_H */
