/* SPDX-License-Identifier: GPL-2.0 */
/*
 * a64 - the arm64 counterpart of tests/vm/lib/kvmtest: in-VM tests of
 * KVM's stage-2 MMU under QEMU's emulated EL2.
 *
 * A VM here has the touch program (guest.S) in a one-page code memslot
 * and runs it with the guest's stage-1 MMU off, so that every guest
 * access to a fresh page is a stage-2 translation fault on the host.
 * The program reports through an MMIO write to A64_DONE_GPA, which lies
 * in no memslot (KVM_EXIT_MMIO).
 *
 * Reporting is kvmtest's, from the file both share
 * (tests/vm/lib/kt_core.h, built here through lib/core.c): one "PASS: ",
 * "FAIL: " or "SKIP: " line per check, "# " for information; a64_exit()
 * gives 0, 1 or 4.
 */
#ifndef A64_H
#define A64_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <linux/kvm.h>

#include "../../vm/lib/kt_core.h"

/* Reporting, /dev/kvm, stats and the clock are kt_core's. */
#define A64_EXIT_PASS	KT_EXIT_PASS
#define A64_EXIT_FAIL	KT_EXIT_FAIL
#define A64_EXIT_SKIP	KT_EXIT_SKIP
#define a64_pass	kt_pass
#define a64_fail	kt_fail
#define a64_skip	kt_skip
#define a64_info	kt_info
#define a64_exit	kt_exit
#define a64_now_ns	kt_now_ns
#define A64_ASSERT	KT_ASSERT
#define A64_EXPECT	KT_EXPECT
#define A64_REQUIRE	KT_REQUIRE

#define A64_PAGE	4096ULL
#define A64_CODE_SLOT	0
#define A64_CODE_GPA	0x0ULL
#define A64_DONE_GPA	0xfff000ULL	/* MMIO, in no memslot */
#define A64_MAX_SLOTS	16

enum a64_touch_mode {
	A64_TOUCH_WRITE = 0,	/* store the address's low 32 bits in each page */
	A64_TOUCH_READ = 1,	/* sum each page's first word (mod 2^32) */
};

struct a64_slot {
	bool used, owned;
	uint32_t flags;
	uint64_t gpa, size;
	void *hva;
};

struct a64_vm {
	int kvm_fd, fd, run_size;
	struct a64_slot slots[A64_MAX_SLOTS];
	struct kt_stats stats;
};

struct a64_vcpu {
	struct a64_vm *vm;
	int id, fd;
	struct kvm_run *run;
	struct kt_stats stats;
};

/* SKIP (exit 4) unless /dev/kvm opens with the right API version. */
void a64_require_kvm(void);
struct a64_vm *a64_vm_create(void);
void a64_vm_free(struct a64_vm *vm);
int a64_vm_check_ext(struct a64_vm *vm, long cap);
/*
 * Memslot @slot at @gpa, @size bytes.  With @host NULL the library maps
 * anonymous memory, MADV_NOHUGEPAGE unless @thp (4 KiB host pages, so
 * stage-2 mappings are 4 KiB and faults countable).
 */
void *a64_vm_add_slot(struct a64_vm *vm, uint32_t slot, uint64_t gpa,
		      uint64_t size, uint32_t flags, void *host, bool thp);
void a64_vm_set_slot_flags(struct a64_vm *vm, uint32_t slot, uint32_t flags);
/* Delete memslot @slot (memory_size 0); its host memory stays mapped. */
void a64_vm_delete_slot(struct a64_vm *vm, uint32_t slot);

struct a64_vcpu *a64_vcpu_add(struct a64_vm *vm, int id);
void a64_vcpu_free(struct a64_vcpu *vcpu);
/*
 * One pass of the touch program over [@start, @end) every @stride bytes
 * (0: a page): run until it reports and return its result (the read sum;
 * 0 for writes).  Any other exit is a FAIL that ends the program.
 */
uint32_t a64_touch(struct a64_vcpu *vcpu, uint64_t start, uint64_t end,
		   uint64_t stride, enum a64_touch_mode mode);
/*
 * The same pass, but any other exit ends it: return 0 with the result in
 * *@val once the program reports, else the exit reason (vcpu->run says
 * more; the vCPU stays where it exited).
 */
int a64_touch_run(struct a64_vcpu *vcpu, uint64_t start, uint64_t end,
		  uint64_t stride, enum a64_touch_mode mode, uint32_t *val);
/*
 * KVM_SET_PREFETCH_POLICY: @name, @nr_pages (0: the default), @gup
 * (KVM_PREFETCH_GUP_*).  Return 0 or -errno.
 */
int a64_vm_set_prefetch(struct a64_vm *vm, const char *name,
			uint32_t nr_pages, uint32_t gup);

/*
 * A VM with policy @name, @nr_pages, @gup (KVM_SET_PREFETCH_POLICY; a
 * refusal is a FAIL that ends the program).
 */
struct a64_vm *a64_vm_with_policy(const char *name, uint32_t nr_pages,
				  uint32_t gup);
/*
 * vCPU 0 of @vm, run once over nothing at @gpa: the code page's own fault
 * (and its window) comes first, before the test's.
 */
struct a64_vcpu *a64_vcpu_ready(struct a64_vm *vm, uint64_t gpa);

/* First u64 of stat @name: 0, -ENOENT (no such stat) or -errno. */
int a64_vcpu_stat(struct a64_vcpu *vcpu, const char *name, uint64_t *val);
uint64_t a64_vcpu_stat_get(struct a64_vcpu *vcpu, const char *name);
/* Stage-2 guest faults so far: "pf_taken" (ours), else NAN-free -1. */
int64_t a64_vcpu_faults(struct a64_vcpu *vcpu);

/* The vCPU's pf_taken, prefetch_windows and prefetch_mapped now. */
struct a64_counts {
	uint64_t pf, win, mapped;
};
struct a64_counts a64_vcpu_counts(struct a64_vcpu *vcpu);

/*
 * Pages of @mem (the host memory of guest [@gpa, @gpa + @n pages)) whose
 * first word is not what A64_TOUCH_WRITE stores there.
 */
int a64_pages_wrong(const char *mem, uint64_t gpa, uint64_t n);
/* What a read pass over those pages sums (mod 2^32) once they are right. */
uint32_t a64_pages_sum(uint64_t gpa, uint64_t n);
/*
 * After a write pass over those pages: expect (PASS or FAIL, @what in
 * front) that the host reads what the guest wrote.  a64_pages_sum().
 */
uint32_t a64_expect_written(const char *what, const char *mem, uint64_t gpa,
			    uint64_t n);
/* KVM_PRE_FAULT_MEMORY: 0 or -errno; *@left (if set) the size it leaves. */
int a64_pre_fault(struct a64_vcpu *vcpu, uint64_t gpa, uint64_t size,
		  uint64_t flags, uint64_t *left);

/* KVM_CAP_PREFETCH_POLICY on a fresh VM (lib/uffd.c). */
int a64_prefetch_cap(void);
/* a64_require_kvm(), then SKIP (exit 4) unless a64_prefetch_cap() > 0. */
void a64_require_prefetch(void);

/*
 * A userfaultfd restore handler (lib/uffd.c): a thread that populates the
 * naturally aligned @chunk around each event in one ioctl, UFFDIO_COPY
 * from @snap (MISSING mode) or, with @minor, UFFDIO_CONTINUE (MINOR mode
 * on shmem: the page cache holds the snapshot).  Fill in the first four
 * fields, zero the rest; a64_uffd_start() arms [@base, @base + len).
 */
struct a64_uffd {
	char *base, *snap;
	uint64_t chunk;
	bool minor;
	/* Out: events read, fill ioctls failed (not EEXIST), their CPU time. */
	int events, errors;
	uint64_t fill_ns;
	/* Private. */
	int uffd;
	volatile int stop;
	pthread_t thread;
};

void a64_uffd_start(struct a64_uffd *h, uint64_t len);
/* Stop and join the thread, close the userfaultfd. */
void a64_uffd_stop(struct a64_uffd *h);

#endif /* A64_H */
