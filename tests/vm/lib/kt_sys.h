/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kt_sys - system-side helpers for the in-VM prefetch tests.
 *
 * Module swaps through /bin/kvm-reload with a guard that restores
 * "kvm-reload ours" even when a test dies, a VM's debugfs directory
 * ("<pid>-<vmfd>"), wrappers for KVM_GET/SET_PREFETCH_POLICY and a reader
 * for new kernel log records.  The sysfs reads and writes that return
 * -errno (ktsys_read(), ktsys_write(), ...) are kt_core's, shared with
 * the arm64 library.
 *
 * All symbols start with ktsys_ / KTSYS_ (the lib/ directory is shared
 * with other helper libraries and linked into every test program).
 */
#ifndef KT_SYS_H
#define KT_SYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/kvm.h>

#include "kt_core.h"	/* ktsys_read(), ktsys_write() and the others */

/*
 * Test programs are built against the patched <linux/kvm.h>, which
 * includes the prefetch uAPI.  Until the kernel tree carries it, take the
 * repository's copy so that the tests still compile (same include guard).
 */
#ifndef KVM_SET_PREFETCH_POLICY
#include "../../../include/uapi/linux/kvm_prefetch.h"
#endif

#define KTSYS_PARAM_DIR		"/sys/module/kvm/parameters/"
#define KTSYS_P_POLICY		KTSYS_PARAM_DIR "prefetch_policy"
#define KTSYS_P_NR_PAGES	KTSYS_PARAM_DIR "prefetch_nr_pages"
#define KTSYS_P_GUP		KTSYS_PARAM_DIR "prefetch_gup"
#define KTSYS_P_AVAILABLE	KTSYS_PARAM_DIR "prefetch_available"
#define KTSYS_P_ENGINE		KTSYS_PARAM_DIR "prefetch_engine"
#define KTSYS_KVM_REFCNT	"/sys/module/kvm/refcnt"
#define KTSYS_DEBUGFS_KVM	"/sys/kernel/debug/kvm"

/* ---- module swaps ---------------------------------------------------- */

/*
 * Call first thing in main() of a test that swaps modules or changes the
 * kvm.ko prefetch defaults.  Forks: the child returns and runs the test;
 * the parent waits (at most @timeout_s seconds, then kills the child),
 * runs "kvm-reload ours" unless the child's last ktsys_restore()
 * succeeded after its last ktsys_reload(), and exits with the child's
 * status (1 with a FAIL line if the child crashed, timed out or the
 * restore failed).
 */
void ktsys_guard(int timeout_s);
/*
 * "kvm-reload @args" (e.g. "stock", "ours prefetch_policy=bogus",
 * "ours -- npt=0").  All VMs must be closed.  Returns the exit status
 * of kvm-reload (0 on success), -1 if it could not be run.
 */
int ktsys_reload(const char *args);
/* "kvm-reload ours" with default parameters; marks the guard clean. */
int ktsys_restore(void);

/* ---- prefetch feature ------------------------------------------------ */

/* True if the loaded kvm.ko has the prefetch framework (sysfs knobs). */
bool ktsys_prefetch_present(void);
/* SKIP (exit 4 or the current status) unless ktsys_prefetch_present(). */
void ktsys_require_prefetch(void);

/*
 * The start of a test of our modules that changes their parameters:
 * ktsys_guard(@timeout_s), SKIP without /dev/kvm, "kvm-reload ours" (a
 * failure is a FAIL that ends the program), SKIP without the prefetch
 * framework.
 */
void ktsys_start_ours(int timeout_s);

/* "auto"/"8"/"nofault" in the kvm.ko parameters; 0 or -errno. */
int ktsys_set_defaults(const char *policy, const char *nr_pages,
		       const char *gup);

/* "fault" or "batch" in prefetch_engine; a failure ends the program. */
void ktsys_set_engine(const char *engine);

/*
 * Make @policy the default (prefetch_policy; a failure ends the
 * program) and expect (PASS or FAIL) that a new VM starts with it.
 */
void ktsys_default_for_new_vms(const char *policy);

/* ---- per-VM policy ioctls -------------------------------------------- */

/* Fill @p: zeroes, then @name (at most 16 bytes, no NUL added at 16). */
void ktsys_policy_fill(struct kvm_prefetch_policy *p, const char *name,
		       uint32_t nr_pages, uint32_t gup);
/* KVM_GET_PREFETCH_POLICY into @p; 0 or -errno. */
int ktsys_get_policy(int vmfd, struct kvm_prefetch_policy *p);
/* KVM_SET_PREFETCH_POLICY with any pointer; 0 or -errno. */
int ktsys_set_policy_ptr(int vmfd, const void *arg);
/* KVM_SET_PREFETCH_POLICY { @name, @nr_pages, @gup }; 0 or -errno. */
int ktsys_set_policy(int vmfd, const char *name, uint32_t nr_pages,
		     uint32_t gup);
/* "nofault", "fast", "default" or "?". */
const char *ktsys_gup_str(uint32_t gup);
/* The debugfs form "name nr_pages=N gup=G" of @p. */
void ktsys_policy_str(const struct kvm_prefetch_policy *p, char *buf,
		      size_t len);
/* Byte-wise equality of two policy structs (all 64 bytes). */
bool ktsys_policy_eq(const struct kvm_prefetch_policy *a,
		     const struct kvm_prefetch_policy *b);

/* ---- debugfs --------------------------------------------------------- */

/* "/sys/kernel/debug/kvm/<pid>-<vmfd>" in @buf; 0 if it exists, -errno. */
int ktsys_vm_debugfs_dir(int vmfd, char *buf, size_t len);
/* The VM's debugfs prefetch_policy line (newline stripped); 0 or -errno. */
int ktsys_vm_debugfs_policy(int vmfd, char *buf, size_t len);

/* ---- kernel log ------------------------------------------------------- */

/* Open /dev/kmsg positioned after the newest record; fd or -errno. */
int ktsys_kmsg_open(void);
/*
 * Read the next record's message text (without the "prio,seq,..;"
 * prefix and continuation lines) into @buf.  Returns its log level
 * (0..7), -EAGAIN when there are no more records, or -errno.
 */
int ktsys_kmsg_next(int fd, char *buf, size_t len);

/* ---- trace events ---------------------------------------------------- */

/*
 * Count the records of one trace event, e.g.
 * "kvm/kvm_async_pf_not_present": ktsys_trace_begin() clears the trace
 * buffer and enables the event (tracefs under /sys/kernel/tracing or
 * debugfs); ktsys_trace_end() disables it and returns how many records
 * the buffer holds, or -errno (-ENOENT: no such event or no tracefs).
 * One event at a time, system-wide.
 */
int ktsys_trace_begin(const char *event);
/* The tracefs directory, or NULL if there is none. */
const char *ktsys_tracefs(void);
long ktsys_trace_end(const char *event);
/*
 * Disable @event and hand every line of the trace buffer (up to 511
 * characters each) to @fn; the number of lines, or -errno.
 */
long ktsys_trace_lines(const char *event,
		       void (*fn)(const char *line, void *arg), void *arg);
/*
 * A kprobe event: ktsys_kprobe_add("kp/name", "symbol") makes
 * "p:kp/name symbol", which ktsys_trace_begin("kp/name") then counts;
 * ktsys_kprobe_del("kp/name") removes it.  @filter, if not NULL, is the
 * event's filter (e.g. "common_pid == 42").  Return 0 or -errno (-ENOENT:
 * no tracefs or no such symbol).
 */
int ktsys_kprobe_add(const char *event, const char *symbol,
		     const char *filter);
int ktsys_kprobe_del(const char *event);

/* ---- leaf SPTEs from the kvm_tdp_mmu_spte_changed trace event ------ */

/* SPTE bits (spte.h, the same on both bases). */
#define KTSYS_SPTE_PRESENT	(1ULL << 11)		/* SPTE_MMU_PRESENT_MASK */
#define KTSYS_SPTE_LARGE	(1ULL << 7)		/* PT_PAGE_SIZE_MASK */
#define KTSYS_SPTE_WRITABLE	(1ULL << 1)
#define KTSYS_SPTE_PFN(s)	(((s) & 0x000ffffffffff000ULL) >> 12)
#define KTSYS_BLOCK_PAGES	512			/* a 2 MiB leaf */

/* One SPTE change of address space 0 at level 1 (4 KiB) or 2 (2 MiB). */
struct ktsys_spte_change {
	uint64_t gfn, old_spte, new_spte;
	int level;
};

/*
 * Parse one line of the trace: true if it is such a change (into @c).
 * A line that says "LOST" adds one to *@lost.
 */
bool ktsys_spte_parse(const char *line, struct ktsys_spte_change *c,
		      long *lost);
/*
 * Apply @c to the final leaf SPTEs (@spte, and @level: 0 for none) of
 * the @n pages from @gfn0 (2 MiB aligned): a leaf replaces what covered
 * its pages, a leaf that goes leaves them with none.  Returns false if
 * @c covers none of the pages.
 */
bool ktsys_spte_apply(const struct ktsys_spte_change *c, uint64_t gfn0,
		      uint64_t n, uint64_t *spte, uint8_t *level);

/* ---- the random tests' plumbing ------------------------------------- */

/*
 * The number after "<@key>=" on the kernel command line (strtoul base 0,
 * e.g. key "kp.fuzz.seed"), or @def if it is not there.
 */
unsigned long ktsys_cmdline_ulong(const char *key, unsigned long def);
/*
 * The start of a seeded random test of the trace (prefetch_diff,
 * prefetch_fuzz): ktsys_start_ours(@timeout_s), SKIP without /dev/kvm or
 * tracefs, ktsys_pin_cpu0(), the prefetch_engine to restore at the end
 * in @engine (@len bytes), and "kp.<@name>.seed" and "kp.<@name>.cases"
 * of the kernel command line in *@seed and *@cases (kept if absent).
 */
void ktsys_start_random(int timeout_s, const char *name, char *engine,
			size_t len, unsigned long *seed, unsigned long *cases);
/*
 * /proc/self/pagemap of @n pages from @mem into @out (present bit 63, pfn
 * in bits 0-54); a failure is a FAIL that ends the program.
 */
void ktsys_pagemap(const void *mem, uint64_t n, uint64_t *out);
/* The pfn of a pagemap entry, KTSYS_NO_PFN if its page is not present. */
#define KTSYS_NO_PFN	(~0ULL)
static inline uint64_t ktsys_pagemap_pfn(uint64_t e)
{
	return e >> 63 ? e & ((1ULL << 55) - 1) : KTSYS_NO_PFN;
}
/*
 * The pfn that a leaf SPTE of @level (1: 4 KiB, 2: 2 MiB) maps page @i of
 * a 2 MiB-aligned range to.
 */
static inline uint64_t ktsys_leaf_pfn(uint64_t spte, int level, uint64_t i)
{
	return KTSYS_SPTE_PFN(spte) + (level == 2 ? i % KTSYS_BLOCK_PAGES : 0);
}
/*
 * Run on CPU 0 only, so that the trace's per-CPU buffers hold one ordered
 * stream of what this thread's vCPU does; a failure ends the program.
 */
void ktsys_pin_cpu0(void);
/*
 * Set transparent hugepages to "madvise" (the test VM boots with never),
 * keeping the mode it had in @was (@len bytes); false if there is no THP.
 * ktsys_thp_restore(@was) puts it back.
 */
bool ktsys_thp_madvise(char *was, size_t len);
void ktsys_thp_restore(const char *was);

#endif /* KT_SYS_H */
