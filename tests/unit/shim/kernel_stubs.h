/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel stubs: userspace stand-ins for the kernel infrastructure the prefetch
 * core uses.  They behave like the kernel's where the core depends on it
 * and check the rules the kernel would (lockdep, might_sleep, RCU-list
 * and module-refcount rules), reporting breaches with shim_violation().
 * Switches and counters live in control.h.
 */
#ifndef __SHIM_KERNEL_STUBS_H
#define __SHIM_KERNEL_STUBS_H

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/*
 * The kernel's own userspace copies (tools/include of the extracted
 * tree): types, compiler helpers, READ_ONCE()/WRITE_ONCE(), min()/max(),
 * container_of(), ERR_PTR(), lists, log2 and alignment helpers.
 */
#include <linux/align.h>
#include <linux/bits.h>
#include <linux/compiler.h>
#include <linux/err.h>
#include <linux/export.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/log2.h>
#include <linux/types.h>

#include "control.h"

#define GFP_KERNEL_ACCOUNT	GFP_KERNEL

/* No KCSAN here: a racy read on purpose is a plain read. */
#define data_race(expr)		(expr)

/* ---- warnings and printk ------------------------------------------ */

/* A WARN the test did not expect (shim.warn_expected) fails it. */
#define WARN_ON(cond) ({						\
	bool __c = !!(cond);						\
	if (__c) {							\
		shim.warnings++;					\
		if (!shim.warn_expected)				\
			shim_violation(__FILE__, __LINE__,		\
				       "WARN_ON(%s)", #cond);		\
	}								\
	__c;								\
})
#define WARN_ON_ONCE(cond)	WARN_ON(cond)

static const char *const shim_log_names[SHIM_LOG_NR] = {
	"err", "warn", "notice", "debug",
};

__attribute__((format(printf, 2, 3)))
static inline void shim_printk(enum shim_log_level level, const char *fmt, ...)
{
	size_t room = sizeof(shim.log) - shim.log_len;
	va_list ap;
	int n;

	shim.nr_log[level]++;
	n = snprintf(shim.log + shim.log_len, room, "<%s> ",
		     shim_log_names[level]);
	if (n > 0 && (size_t)n < room) {
		shim.log_len += n;
		room -= n;
		va_start(ap, fmt);
		n = vsnprintf(shim.log + shim.log_len, room, fmt, ap);
		va_end(ap);
		if (n > 0)
			shim.log_len += (size_t)n < room ? (size_t)n : room - 1;
	}
}

/* pr_fmt() is the including kernel file's. */
#ifndef xchg
#define xchg(ptr, v)	__atomic_exchange_n((ptr), (v), __ATOMIC_SEQ_CST)
#endif
#define pr_warn_ratelimited(fmt, ...) \
	shim_printk(SHIM_LOG_WARN, pr_fmt(fmt), ##__VA_ARGS__)
#define pr_err(fmt, ...)	shim_printk(SHIM_LOG_ERR, pr_fmt(fmt), ##__VA_ARGS__)
#define pr_warn(fmt, ...)	shim_printk(SHIM_LOG_WARN, pr_fmt(fmt), ##__VA_ARGS__)
#define pr_notice(fmt, ...)	shim_printk(SHIM_LOG_NOTICE, pr_fmt(fmt), ##__VA_ARGS__)
#define pr_debug(fmt, ...)	shim_printk(SHIM_LOG_DEBUG, pr_fmt(fmt), ##__VA_ARGS__)

/* ---- locks, checked for balance and context ------------------------ */

typedef struct {
	int held;
} spinlock_t;

struct mutex {
	int held;
};

#define DEFINE_SPINLOCK(x)	spinlock_t x = { 0 }
#define lockdep_is_held(l)	((l)->held)

/*
 * Taking and dropping what one holds alone (a lock, a loaded vCPU),
 * checked: @held is the object's own flag, @depth what shim counts of
 * its kind; @sleeps says whether taking it may sleep.
 */
static inline void shim_take(int *held, int *depth, bool sleeps,
			     const char *what, const char *file, int line)
{
	if (sleeps)
		shim_might_sleep(what, file, line);
	if (*held)
		shim_violation(file, line, "%s of what is held (deadlock)", what);
	*held = 1;
	(*depth)++;
}

static inline void shim_drop(int *held, int *depth, const char *what,
			     const char *file, int line)
{
	if (!*held) {
		shim_violation(file, line, "%s of what is not held", what);
		return;
	}
	*held = 0;
	(*depth)--;
}

#define SHIM_TAKE(held, kind, sleeps, what)				\
	shim_take(held, &shim.kind, sleeps, what, __FILE__, __LINE__)
#define SHIM_DROP(held, kind, what)					\
	shim_drop(held, &shim.kind, what, __FILE__, __LINE__)

#define spin_lock(l)	SHIM_TAKE(&(l)->held, spin_depth, false, "spin_lock()")
#define spin_unlock(l)	SHIM_DROP(&(l)->held, spin_depth, "spin_unlock()")
#define mutex_lock(m)	SHIM_TAKE(&(m)->held, mutex_depth, true, "mutex_lock()")
#define mutex_unlock(m)	SHIM_DROP(&(m)->held, mutex_depth, "mutex_unlock()")

/* ---- RCU ----------------------------------------------------------- */

static inline void shim_rcu_read_unlock(const char *file, int line)
{
	if (shim.rcu_depth <= 0) {
		shim_violation(file, line, "rcu_read_unlock() without rcu_read_lock()");
		return;
	}
	shim.rcu_depth--;
}

static inline void shim_synchronize_rcu(const char *file, int line)
{
	shim_might_sleep("synchronize_rcu()", file, line);
	if (shim.synchronize_rcu_hook)
		shim.synchronize_rcu_hook();
	shim.grace_periods++;
}

static inline void shim_rcu_check(bool ok, const char *what, const char *file,
				  int line)
{
	if (!ok)
		shim_violation(file, line, "%s outside rcu_read_lock() and without the lock",
			       what);
}

#define rcu_read_lock()		((void)(shim.rcu_depth++, shim.rcu_sections++))
#define rcu_read_unlock()	shim_rcu_read_unlock(__FILE__, __LINE__)
#undef synchronize_rcu		/* tools' <linux/kernel.h>: a no-op */
#define synchronize_rcu()	shim_synchronize_rcu(__FILE__, __LINE__)

#define rcu_dereference(p) ({						\
	shim_rcu_check(shim.rcu_depth > 0, "rcu_dereference()",		\
		       __FILE__, __LINE__);				\
	(p);								\
})
#define rcu_dereference_protected(p, c) ({				\
	shim_rcu_check((c), "rcu_dereference_protected()",		\
		       __FILE__, __LINE__);				\
	(p);								\
})
#define RCU_INIT_POINTER(p, v)	do { (p) = (v); } while (0)
#define rcu_assign_pointer(p, v) do {					\
	shim.publish_gp = shim.grace_periods;				\
	(p) = (v);							\
} while (0)

/*
 * RCU lists are the plain ones of tools/include (one thread, no reordering
 * to guard against); the walk checks that the reader is in an RCU read
 * section or holds the lock named by the optional lockdep condition.
 */
#define list_add_tail_rcu(new, head)	list_add_tail(new, head)

/* include/linux/rculist.h: readers may still follow ->next. */
static inline void list_del_rcu(struct list_head *entry)
{
	__list_del_entry(entry);
	entry->prev = LIST_POISON2;
}

/* The kernel's trick for the optional lockdep condition. */
#define __shim_list_check_rcu(dummy, cond, extra...)			\
	shim_rcu_check((cond) || shim.rcu_depth > 0,			\
		       "list_for_each_entry_rcu()", __FILE__, __LINE__)
#define list_for_each_entry_rcu(pos, head, member, cond...)		\
	list_for_each_entry(pos, ({ __shim_list_check_rcu(dummy, ## cond, 0); \
				    (head); }), member)

/* ---- SRCU, vCPUs, tasks -------------------------------------------- */

struct srcu_struct {
	int depth;
};

static inline int shim_srcu_read_lock(struct srcu_struct *ssp)
{
	shim.srcu_depth++;
	return ssp->depth++ & 1;
}

static inline void shim_srcu_read_unlock(struct srcu_struct *ssp, int idx,
					 const char *file, int line)
{
	if (ssp->depth <= 0 || ((ssp->depth - 1) & 1) != idx) {
		shim_violation(file, line, "srcu_read_unlock() unbalanced");
		return;
	}
	ssp->depth--;
	shim.srcu_depth--;
}

#define srcu_read_lock(ssp)		shim_srcu_read_lock(ssp)
#define srcu_read_unlock(ssp, idx)	shim_srcu_read_unlock(ssp, idx, __FILE__, __LINE__)

static inline void shim_cond_resched(const char *file, int line)
{
	shim_might_sleep("cond_resched()", file, line);
	shim.cond_resched_calls++;
}
#define cond_resched()	shim_cond_resched(__FILE__, __LINE__)

struct mm_struct {
	int mmap_locked;
};

struct task_struct {
	struct mm_struct *mm;
};

static struct mm_struct shim_mm;
static struct task_struct shim_task = { .mm = &shim_mm };
#define current		(&shim_task)

static inline bool signal_pending(struct task_struct *p)
{
	return shim.signal_pending;
}

static inline bool need_resched(void)
{
	return shim.need_resched;
}

/* ---- modules ------------------------------------------------------- */

/* As the kernel's: LIVE is 0, so a zeroed module is live. */
enum module_state {
	MODULE_STATE_LIVE,
	MODULE_STATE_COMING,
	MODULE_STATE_GOING,
	MODULE_STATE_UNFORMED,
};

struct module {
	const char *name;
	int refcnt;
	bool going;	/* MODULE_STATE_GOING: being unloaded */
	/* COMING: its init runs; try_module_get() still succeeds */
	enum module_state state;
};

/* kvm.ko, which the built-in policies belong to. */
static struct module shim_this_module __attribute__((unused)) = { .name = "kvm" };
#define THIS_MODULE	(&shim_this_module)

static inline bool try_module_get(struct module *m)
{
	if (!m)
		return true;
	if (m->going)
		return false;
	m->refcnt++;
	shim.module_refs++;
	return true;
}

static inline void shim_module_put(struct module *m, const char *file, int line)
{
	if (!m)
		return;
	if (m->refcnt <= 0) {
		shim_violation(file, line, "module_put(%s) without a reference",
			       m->name);
		return;
	}
	m->refcnt--;
	shim.module_refs--;
}
#define module_put(m)	shim_module_put(m, __FILE__, __LINE__)

/*
 * delete_module() as the kernel does it: refuse while referenced,
 * otherwise mark the module going and run its exit function.
 */
static inline int shim_module_unload(struct module *m, void (*exit_fn)(void))
{
	if (m->refcnt)
		return -EWOULDBLOCK;
	m->going = true;
	if (exit_fn)
		exit_fn();
	return 0;
}

#define MODULE_PARM_DESC(name, desc) \
	static const char __shim_parm_desc_##name[] __attribute__((unused)) = desc

/* An audited check: a denial would be logged (audit, LSM). */
static inline bool capable(int cap)
{
	shim.last_capable = cap;
	shim.audited_capable_calls++;
	return cap < 64 && (shim.caps >> cap) & 1;
}

struct user_namespace {
	int unused;
};
static struct user_namespace init_user_ns __attribute__((unused));

/* The same check without an audit record. */
static inline bool ns_capable_noaudit(struct user_namespace *ns, int cap)
{
	if (ns != &init_user_ns)
		shim_violation(__FILE__, __LINE__,
			       "capability checked outside init_user_ns");
	shim.last_capable = cap;
	return cap < 64 && (shim.caps >> cap) & 1;
}

__attribute__((format(printf, 1, 2)))
static inline int shim_request_module(const char *fmt, ...)
{
	va_list ap;

	shim_might_sleep("request_module()", "(request_module)", 0);
	shim.request_module_calls++;
	va_start(ap, fmt);
	vsnprintf(shim.request_module_name, sizeof(shim.request_module_name),
		  fmt, ap);
	va_end(ap);
	if (shim.request_module_hook)
		shim.request_module_hook(shim.request_module_name);
	return 0;
}
#define request_module(mod...)	shim_request_module(mod)

/* ---- memory -------------------------------------------------------- */

#define PAGE_SHIFT		12
#define PAGE_SIZE		(1UL << PAGE_SHIFT)
#define PAGE_MASK		(~(PAGE_SIZE - 1))
#define PAGE_ALIGNED(addr)	IS_ALIGNED((unsigned long)(addr), PAGE_SIZE)
#define offset_in_page(p)	((unsigned long)(p) & ~PAGE_MASK)

static inline void *shim_kzalloc(size_t size, gfp_t gfp, const char *file,
				 int line)
{
	void *p;

	shim_might_sleep("kzalloc(GFP_KERNEL)", file, line);
	if (shim.kzalloc_fail)
		return NULL;
	p = calloc(1, size);
	if (p)
		shim.allocs++;
	return p;
}

static inline void kfree(const void *p)
{
	if (!p)
		return;
	shim.allocs--;
	free((void *)p);
}

#define kzalloc(size, gfp)	shim_kzalloc(size, gfp, __FILE__, __LINE__)

/* copy_*_user() return the number of bytes not copied. */
static inline unsigned long shim_copy_from_user(void *to, const void __user *from,
						unsigned long n, const char *file,
						int line)
{
	shim_might_sleep("copy_from_user()", file, line);
	if (shim.copy_from_user_fail || !from) {
		memset(to, 0, n);	/* as _copy_from_user() does */
		return n;
	}
	memcpy(to, from, n);
	return 0;
}

static inline unsigned long shim_copy_to_user(void __user *to, const void *from,
					      unsigned long n, const char *file,
					      int line)
{
	shim_might_sleep("copy_to_user()", file, line);
	if (shim.copy_to_user_fail || !to)
		return n;
	memcpy(to, from, n);
	return 0;
}

#define copy_from_user(to, from, n)	shim_copy_from_user(to, from, n, __FILE__, __LINE__)
#define copy_to_user(to, from, n)	shim_copy_to_user(to, from, n, __FILE__, __LINE__)

/* ---- host memory and GUP, driven by shim.host ---------------------- */

struct page {
	int refs;
};

struct vm_area_struct {
	unsigned long vm_start;
	unsigned long vm_end;
	unsigned long vm_flags;
	struct mm_struct *vm_mm;
};

/* Every address is backed by this one page when shim.host.present. */
static struct page shim_page;
#define SHIM_PFN	0x12345ULL

static inline unsigned long page_to_pfn(const struct page *page)
{
	return SHIM_PFN + (page - &shim_page);
}

static inline struct page *pfn_to_page(unsigned long pfn)
{
	return &shim_page + (pfn - SHIM_PFN);
}

static inline void put_page(struct page *page)
{
	page->refs--;
	shim.page_refs--;
}

/* The shim's pages are never reserved; dirtying them is counted. */
static inline bool PageReserved(const struct page *page)
{
	return false;
}

static inline void SetPageDirty(struct page *page)
{
	shim.pages_dirtied++;
}

static inline struct page *shim_get_page(void)
{
	shim_page.refs++;
	shim.page_refs++;
	return &shim_page;
}

#define mmap_read_lock(mm)						\
	SHIM_TAKE(&(mm)->mmap_locked, mmap_depth, true, "mmap_read_lock()")
#define mmap_read_unlock(mm)						\
	SHIM_DROP(&(mm)->mmap_locked, mmap_depth, "mmap_read_unlock()")
/* Fails while shim.host.mmap_contended (a writer holds the lock). */
#define mmap_read_trylock(mm)						\
	(shim.host.mmap_contended ? (shim.mmap_trylock_failed++, false) :	\
	 (SHIM_TAKE(&(mm)->mmap_locked, mmap_depth, false,		\
		    "mmap_read_trylock()"), true))

/* ---- the kernel's values and library, copied ----------------------- */

#include "kernel_copies.h"

/* ---- KVM ------------------------------------------------------------ */

#define vcpu_load(vcpu)							\
	SHIM_TAKE(&(vcpu)->loaded, vcpu_loaded, true, "vcpu_load()")
#define vcpu_put(vcpu)	SHIM_DROP(&(vcpu)->loaded, vcpu_loaded, "vcpu_put()")

/* The vCPU loaded on this CPU: the one a test runs the code for. */
static inline struct kvm_vcpu *kvm_get_running_vcpu(void)
{
	return shim.running_vcpu;
}

/*
 * ---- GUP, following shim.host ---------------------------------------
 *
 * One VMA covers every address, with shim.host.vm_flags, unless
 * shim.host.no_vma.  Fast GUP, like the kernel's, fails for special
 * (VM_PFNMAP/VM_IO) PTEs and for writes to read-only PTEs.  Slow GUP
 * honours FOLL_NOFAULT except in hugetlb VMAs (6.1's follow_hugetlb_page()
 * ignores it); a call that would fault a page in counts in
 * shim.faulted_in, which fails the test.
 */
static struct vm_area_struct shim_vma = {
	.vm_start = 0, .vm_end = PAGE_OFFSET, .vm_mm = &shim_mm,
};

static inline bool get_user_page_fast_only(unsigned long addr,
					   unsigned int gup_flags,
					   struct page **pagep)
{
	shim.gup_fast_calls++;
	shim.gup_fast_flags = gup_flags;
	shim.gup_fast_addr = addr;
	if (!shim.host.present || shim.host.no_vma ||
	    (shim.host.vm_flags & (VM_PFNMAP | VM_IO)))
		return false;
	if ((gup_flags & FOLL_WRITE) && !shim.host.pte_writable &&
	    !(shim.host.writable_from && addr >= shim.host.writable_from))
		return false;
	*pagep = shim_get_page();
	return true;
}

/* Fast GUP of a run: every page of the run behaves as shim.host says. */
static inline int get_user_pages_fast_only(unsigned long start, int nr_pages,
					   unsigned int gup_flags,
					   struct page **pages)
{
	int i;

	for (i = 0; i < nr_pages; i++)
		if (!get_user_page_fast_only(start + i * PAGE_SIZE, gup_flags,
					     &pages[i]))
			break;
	return i;
}

/* A page of a hugetlbfs mapping: every page, in a VM_HUGETLB "VMA". */
static inline bool PageHuge(const struct page *page)
{
	return !!(shim.host.vm_flags & VM_HUGETLB);
}

/* Only hugetlbfs pages are compound here. */
static inline bool PageCompound(const struct page *page)
{
	return PageHuge(page);
}

static inline struct vm_area_struct *shim_vma_lookup(struct mm_struct *mm,
						     unsigned long addr,
						     const char *file, int line)
{
	shim.vma_lookups++;
	if (!mm->mmap_locked)
		shim_violation(file, line, "vma_lookup() without mmap_lock");
	if (shim.host.no_vma)
		return NULL;
	shim_vma.vm_flags = shim.host.vm_flags;
	return &shim_vma;
}
#define vma_lookup(mm, addr)	shim_vma_lookup(mm, addr, __FILE__, __LINE__)

static inline bool is_vm_hugetlb_page(struct vm_area_struct *vma)
{
	return !!(vma->vm_flags & VM_HUGETLB);
}

/* 6.1's signature: pages of current->mm, with an optional vmas array. */
static inline long shim_get_user_pages(unsigned long start,
				       unsigned long nr_pages,
				       unsigned int gup_flags,
				       struct page **pages,
				       struct vm_area_struct **vmas,
				       const char *file, int line)
{
	bool hugetlb = shim.host.vm_flags & VM_HUGETLB;
	bool nofault = (gup_flags & FOLL_NOFAULT) && !hugetlb;
	unsigned long i;

	shim_might_sleep("get_user_pages()", file, line);
	shim.gup_calls++;
	shim.gup_flags = gup_flags;
	shim.gup_addr = start;
	if (!current->mm->mmap_locked)
		shim_violation(file, line, "get_user_pages() without mmap_lock");
	if (!nr_pages)
		shim_violation(file, line, "get_user_pages() of no page");
	if (shim.host.no_vma || (shim.host.vm_flags & (VM_PFNMAP | VM_IO)))
		return -EFAULT;
	if (!shim.host.present ||
	    ((gup_flags & FOLL_WRITE) && !shim.host.pte_writable)) {
		if (nofault)
			return -EFAULT;
		shim.faulted_in++;
	}
	shim.gup_pages += nr_pages;
	for (i = 0; pages && i < nr_pages; i++)
		pages[i] = shim_get_page();
	return nr_pages;
}
#define get_user_pages(start, nr, flags, pages, vmas) \
	shim_get_user_pages(start, nr, flags, pages, vmas, __FILE__, __LINE__)

/* ---- module parameters: recorded, tests call ->set and ->get -------- */

#define SHIM_MAX_PARAMS	8
static struct kernel_param *shim_params[SHIM_MAX_PARAMS];
static int shim_nr_params;

#define module_param_cb(name, ops, arg, perm)				\
	static struct kernel_param __param_##name = {			\
		#name, THIS_MODULE, ops, perm, arg };			\
	__attribute__((constructor))					\
	static void __shim_param_add_##name(void)			\
	{								\
		if (shim_nr_params < SHIM_MAX_PARAMS)			\
			shim_params[shim_nr_params++] = &__param_##name; \
	}

static inline const struct kernel_param *shim_param(const char *name)
{
	int i;

	for (i = 0; i < shim_nr_params; i++)
		if (!strcmp(shim_params[i]->name, name))
			return shim_params[i];
	return NULL;
}

/* ---- debugfs and seq_file ------------------------------------------- */

struct inode {
	void *i_private;
};

struct file {
	void *private_data;
};

struct seq_file {
	char buf[PAGE_SIZE];
	size_t count;
	void *private;
	int (*show)(struct seq_file *m, void *v);
};

struct file_operations {
	struct module *owner;
	int (*open)(struct inode *inode, struct file *file);
	ssize_t (*read)(struct file *file, char __user *buf, size_t size,
			loff_t *ppos);
	loff_t (*llseek)(struct file *file, loff_t offset, int whence);
	int (*release)(struct inode *inode, struct file *file);
};

__attribute__((format(printf, 2, 3)))
static inline void seq_printf(struct seq_file *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	m->count += shim_vscnprintf(m->buf + m->count, sizeof(m->buf) - m->count,
				    fmt, ap);
	va_end(ap);
}

static inline int single_open(struct file *file,
			      int (*show)(struct seq_file *, void *), void *data)
{
	struct seq_file *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->private = data;
	m->show = show;
	file->private_data = m;
	return 0;
}

static inline int single_release(struct inode *inode, struct file *file)
{
	free(file->private_data);
	file->private_data = NULL;
	return 0;
}

static inline ssize_t seq_read(struct file *file, char __user *buf,
			       size_t size, loff_t *ppos)
{
	return -EINVAL;	/* tests read through shim_debugfs_read() */
}

static inline loff_t seq_lseek(struct file *file, loff_t offset, int whence)
{
	return -EINVAL;
}

struct dentry {
	const char *name;
};

static inline struct dentry *debugfs_create_file(const char *name,
						 unsigned short mode,
						 struct dentry *parent,
						 void *data,
						 const struct file_operations *fops)
{
	static struct dentry dentries[SHIM_MAX_DEBUGFS];
	int i = shim.nr_debugfs;

	if (i >= SHIM_MAX_DEBUGFS)
		return ERR_PTR(-ENOMEM);
	shim.debugfs[i].name = name;
	shim.debugfs[i].mode = mode;
	shim.debugfs[i].parent = parent;
	shim.debugfs[i].data = data;
	shim.debugfs[i].fops = fops;
	shim.nr_debugfs++;
	dentries[i].name = name;
	return &dentries[i];
}

/*
 * Open, show and release debugfs file number @i as a read(2) of it would.
 * Return: 0 with the contents in @out, or the open error.
 */
static inline int shim_debugfs_read(int i, char *out, size_t size)
{
	const struct file_operations *fops = shim.debugfs[i].fops;
	struct inode inode = { .i_private = shim.debugfs[i].data };
	struct file file = { 0 };
	struct seq_file *m;
	int ret;

	ret = fops->open(&inode, &file);
	if (ret)
		return ret;
	m = file.private_data;
	ret = m->show(m, NULL);
	snprintf(out, size, "%.*s", (int)m->count, m->buf);
	fops->release(&inode, &file);
	return ret;
}

#endif /* __SHIM_KERNEL_STUBS_H */
