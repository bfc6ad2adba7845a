/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test control: the switches tests flip to steer the stubs (fault
 * injection, capabilities, host page state, the architecture's answers)
 * and the counters the stubs keep so that tests can see what the kernel
 * code did (locks taken, grace periods, GUP calls, module references).
 *
 * Included first by prefetch_internal.h: the stubs read this state.  Each
 * test program is one translation unit, so the state is defined here.
 */
#ifndef __SHIM_CONTROL_H
#define __SHIM_CONTROL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct kvm_vcpu;
struct kvm_pre_fault_memory;

enum shim_log_level {
	SHIM_LOG_ERR, SHIM_LOG_WARN, SHIM_LOG_NOTICE,
	SHIM_LOG_DEBUG, SHIM_LOG_NR,
};

#define SHIM_MAX_DEBUGFS	8

struct shim_state {
	/* ---- switches ---- */
	unsigned long long caps;	/* capable(cap): bit cap set */
	bool kzalloc_fail;		/* kzalloc() returns NULL */
	bool copy_from_user_fail;	/* copy_from_user() copies nothing */
	bool copy_to_user_fail;		/* copy_to_user() copies nothing */
	bool signal_pending;		/* signal_pending(current) */
	bool need_resched;		/* need_resched() */
	bool warn_expected;		/* a WARN_ON() does not fail the test */
	bool arch_prefetch_supported;	/* kvm_arch_prefetch_supported() */
	/* request_module(): called with the formatted module name */
	void (*request_module_hook)(const char *name);
	/* kvm_arch_vcpu_pre_fault_memory() */
	long (*arch_pre_fault)(struct kvm_vcpu *vcpu,
			       struct kvm_pre_fault_memory *range);
	/* Called at the start of every synchronize_rcu() */
	void (*synchronize_rcu_hook)(void);

	/* The host page behind any address (see GUP stubs). */
	struct {
		bool present;		/* a PTE maps a page */
		bool pte_writable;	/* ... writable without a fault */
		/* if set, fast GUP finds PTEs from here on writable */
		unsigned long writable_from;
		bool no_vma;		/* vma_lookup() finds nothing */
		unsigned long vm_flags;	/* the VMA's flags (VM_HUGETLB, ...) */
		bool mmap_contended;	/* mmap_read_trylock() fails */
	} host;
	/* kvm_get_running_vcpu() */
	struct kvm_vcpu *running_vcpu;

	/* ---- what the kernel code did ---- */
	int spin_depth;			/* spinlocks held */
	int mutex_depth;		/* mutexes held */
	int rcu_depth;			/* rcu_read_lock() nesting */
	unsigned long rcu_sections;	/* rcu_read_lock() calls */
	int mmap_depth;			/* mmap_read_lock() held */
	int mmap_trylock_failed;	/* mmap_read_trylock() calls that failed */
	int srcu_depth;			/* srcu_read_lock() nesting */
	int vcpu_loaded;		/* vcpu_load() without vcpu_put() */
	unsigned long grace_periods;	/* synchronize_rcu() calls */
	unsigned long publish_gp;	/* grace_periods at the last rcu_assign_pointer() */
	int module_refs;		/* references taken and not dropped */
	int allocs;			/* kzalloc() not yet kfree()d */
	int page_refs;			/* pages returned by GUP, not yet put */
	int pages_dirtied;		/* SetPageDirty() calls */
	int last_capable;
	int audited_capable_calls;	/* capable(): may log a denial */
	int request_module_calls;
	char request_module_name[64];
	int gup_fast_calls;
	unsigned int gup_fast_flags;
	unsigned long gup_fast_addr;
	int gup_calls;			/* get_user_pages() */
	unsigned long gup_pages;	/* pages it was asked for */
	unsigned int gup_flags;
	unsigned long gup_addr;
	int faulted_in;			/* a GUP that would have faulted a page in */
	int vma_lookups;
	int warnings;			/* WARN_ON*() that fired */
	int cond_resched_calls;

	/* debugfs_create_file() calls */
	struct {
		const char *name;
		unsigned short mode;
		void *parent;
		void *data;
		const void *fops;
	} debugfs[SHIM_MAX_DEBUGFS];
	int nr_debugfs;

	/* pr_*() output, all levels, and a count per level */
	char log[8192];
	size_t log_len;
	int nr_log[SHIM_LOG_NR];

	/* broken kernel rules (lock imbalance, sleeping in atomic, ...) */
	int violations;
	char violation[1024];
};

static struct shim_state shim;

static inline void shim_reset(void)
{
	memset(&shim, 0, sizeof(shim));
	shim.arch_prefetch_supported = true;
}

__attribute__((format(printf, 3, 4)))
static inline void shim_violation(const char *file, int line,
				  const char *fmt, ...)
{
	size_t len = strlen(shim.violation);
	va_list ap;

	shim.violations++;
	if (len + 1 >= sizeof(shim.violation))
		return;
	len += snprintf(shim.violation + len, sizeof(shim.violation) - len,
			"%s%s:%d: ", len ? "; " : "", file, line);
	if (len >= sizeof(shim.violation))
		return;
	va_start(ap, fmt);
	vsnprintf(shim.violation + len, sizeof(shim.violation) - len, fmt, ap);
	va_end(ap);
}

/* Sleeping is not allowed under a spinlock or in an RCU read section. */
static inline void shim_might_sleep(const char *what, const char *file,
				    int line)
{
	if (shim.spin_depth || shim.rcu_depth)
		shim_violation(file, line, "%s may sleep but spinlocks=%d rcu=%d",
			       what, shim.spin_depth, shim.rcu_depth);
}

/* The log as a string, and whether it contains @s. */
static inline bool shim_log_has(const char *s)
{
	return strstr(shim.log, s) != NULL;
}

/*
 * After each test: nothing held, nothing leaked, no rule broken.
 * Return: NULL if clean, otherwise what is wrong.
 */
static inline const char *shim_unclean(char *buf, size_t size)
{
	if (shim.violations)
		snprintf(buf, size, "shim: %d violation(s): %s",
			 shim.violations, shim.violation);
	else if (shim.spin_depth || shim.mutex_depth || shim.rcu_depth ||
		 shim.mmap_depth || shim.srcu_depth || shim.vcpu_loaded)
		snprintf(buf, size,
			 "shim: still held: spin=%d mutex=%d rcu=%d mmap=%d srcu=%d vcpu=%d",
			 shim.spin_depth, shim.mutex_depth, shim.rcu_depth,
			 shim.mmap_depth, shim.srcu_depth, shim.vcpu_loaded);
	else if (shim.module_refs)
		snprintf(buf, size, "shim: %d module reference(s) leaked",
			 shim.module_refs);
	else if (shim.allocs)
		snprintf(buf, size, "shim: %d allocation(s) leaked", shim.allocs);
	else if (shim.page_refs)
		snprintf(buf, size, "shim: %d page reference(s) leaked",
			 shim.page_refs);
	else if (shim.faulted_in)
		snprintf(buf, size, "shim: GUP faulted %d page(s) in",
			 shim.faulted_in);
	else
		return NULL;
	return buf;
}

#endif /* __SHIM_CONTROL_H */
