/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel copies: values, structures (the fields the prefetch core uses, with
 * the kernel's names) and library functions copied from Debian's
 * linux-source-6.1.  Keep them in sync: each says where it comes from
 * (build/pristine/ is the extracted tree, lib/ and fs/ are in
 * /usr/src/linux-source-6.1.tar.xz, include/linux/mm.h in
 * /usr/src/linux-headers-<abi>-common).
 *
 * Included by kernel_stubs.h once the basic types and locks exist.
 */
#ifndef __SHIM_KERNEL_COPIES_H
#define __SHIM_KERNEL_COPIES_H

/* include/linux/kvm_types.h */
typedef u64 gpa_t;
typedef u64 gfn_t;
typedef unsigned long hva_t;
typedef u64 hfn_t;
typedef hfn_t kvm_pfn_t;

/* include/uapi/linux/kvm.h */
#define KVMIO			0xAE
#define KVM_MEM_LOG_DIRTY_PAGES	(1UL << 0)
#define KVM_MEM_READONLY	(1UL << 1)

/*
 * include/uapi/linux/kvm.h: native in 6.12, added to 6.1 by
 * arch/x86/6.1/patches/0006 (the backport of KVM_PRE_FAULT_MEMORY)
 */
#define KVM_CAP_PRE_FAULT_MEMORY 236

struct kvm_pre_fault_memory {
	__u64 gpa;
	__u64 size;
	__u64 flags;
	__u64 padding[5];
};

#define KVM_PRE_FAULT_MEMORY	_IOWR(KVMIO, 0xd5, struct kvm_pre_fault_memory)

/* include/linux/kvm_host.h */
#define KVM_MEMSLOT_INVALID	(1UL << 16)

/* arch/x86/include/asm/kvm_host.h, then include/linux/kvm_host.h */
#define KVM_INTERNAL_MEM_SLOTS	3
#define KVM_MEM_SLOTS_NUM	SHRT_MAX
#define KVM_USER_MEM_SLOTS	(KVM_MEM_SLOTS_NUM - KVM_INTERNAL_MEM_SLOTS)

/* include/linux/kvm_host.h */
#define KVM_PFN_ERR_MASK	(0x7ffULL << 52)
#define KVM_PFN_ERR_NOSLOT_MASK	(0xfffULL << 52)
#define KVM_PFN_NOSLOT		(0x1ULL << 63)
#define KVM_PFN_ERR_FAULT	(KVM_PFN_ERR_MASK)

/* arch/x86/include/asm/page_64_types.h: __PAGE_OFFSET_BASE_L4 */
#define PAGE_OFFSET		0xffff888000000000UL

/* include/linux/kvm_host.h */
#define KVM_HVA_ERR_BAD		(PAGE_OFFSET)
#define KVM_HVA_ERR_RO_BAD	(PAGE_OFFSET + PAGE_SIZE)

static inline bool kvm_is_error_hva(unsigned long addr)
{
	return addr >= PAGE_OFFSET;
}

/* include/linux/mm.h */
#define VM_PFNMAP		0x00000400
#define VM_IO			0x00004000
#define VM_HUGETLB		0x00400000
#define FOLL_WRITE		0x01
#define FOLL_NOFAULT		0x80
#define FOLL_HWPOISON		0x100

/* include/uapi/linux/capability.h */
#define CAP_SYS_MODULE		16

/* include/linux/kvm_host.h (the fields the core uses) */
struct kvm_memory_slot {
	gfn_t base_gfn;
	unsigned long npages;
	unsigned long userspace_addr;
	u32 flags;
	short id;
	u16 as_id;
};

struct dentry;
struct kvm_prefetch_state;

struct kvm {
	struct mutex lock;
	struct srcu_struct srcu;
	struct dentry *debugfs_dentry;
	struct kvm_prefetch_state __rcu *prefetch;	/* 0003 hook patch */
	bool prefetch_may_open;				/* 0003 hook patch */
};

/* arch/x86/include/asm/kvm_host.h (the fields the x86 engine uses) */
struct kvm_mmu;
struct kvm_prefetch_batch;

struct kvm_vcpu_arch {
	struct kvm_mmu *mmu;
	u32 hflags;
	struct kvm_prefetch_batch *prefetch_batch;	/* 0009 hook patch */
};

/* include/linux/kvm_types.h */
struct kvm_vcpu_stat_generic {
	u64 prefetch_mmap_busy;	/* 0010 hook patch */
	u64 prefetch_scanned;	/* 0011 hook patch */
	u64 prefetch_ejected;
	u64 prefetch_skipped;
};

struct kvm_vcpu_stat {
	struct kvm_vcpu_stat_generic generic;
	u64 prefetch_windows;	/* 0003 hook patch */
	u64 prefetch_mapped;
};

/* include/linux/kvm_host.h */
struct kvm_vcpu {
	struct kvm *kvm;
	int vcpu_idx;
	u64 requests;
	struct kvm_vcpu_stat stat;
	struct kvm_vcpu_arch arch;
	int loaded;	/* shim: vcpu_load() without vcpu_put() */
};

/* include/linux/kvm_host.h; the shim's VMs keep no vCPU array. */
static inline struct kvm_vcpu *kvm_get_vcpu(struct kvm *kvm, int i)
{
	return NULL;
}

/* include/linux/kvm_host.h */
static inline bool kvm_request_pending(struct kvm_vcpu *vcpu)
{
	return READ_ONCE(vcpu->requests);
}

static inline bool is_error_noslot_pfn(kvm_pfn_t pfn)
{
	return !!(pfn & KVM_PFN_ERR_NOSLOT_MASK);
}

static inline gpa_t gfn_to_gpa(gfn_t gfn)
{
	return (gpa_t)gfn << PAGE_SHIFT;
}

static inline gfn_t gpa_to_gfn(gpa_t gpa)
{
	return (gfn_t)(gpa >> PAGE_SHIFT);
}

static inline bool kvm_is_visible_memslot(struct kvm_memory_slot *memslot)
{
	return (memslot && memslot->id < KVM_USER_MEM_SLOTS &&
		!(memslot->flags & KVM_MEMSLOT_INVALID));
}

/* include/linux/kvm_host.h */
static inline unsigned long
__gfn_to_hva_memslot(const struct kvm_memory_slot *slot, gfn_t gfn)
{
	unsigned long offset = gfn - slot->base_gfn;

	return slot->userspace_addr + offset * PAGE_SIZE;
}

/* virt/kvm/kvm_main.c */
static inline bool memslot_is_readonly(const struct kvm_memory_slot *slot)
{
	return slot->flags & KVM_MEM_READONLY;
}

/* virt/kvm/kvm_main.c */
static inline unsigned long __gfn_to_hva_many(const struct kvm_memory_slot *slot,
					      gfn_t gfn, gfn_t *nr_pages,
					      bool write)
{
	if (!slot || slot->flags & KVM_MEMSLOT_INVALID)
		return KVM_HVA_ERR_BAD;

	if (memslot_is_readonly(slot) && write)
		return KVM_HVA_ERR_RO_BAD;

	if (nr_pages)
		*nr_pages = slot->npages - (gfn - slot->base_gfn);

	return __gfn_to_hva_memslot(slot, gfn);
}

/* virt/kvm/kvm_main.c */
static inline unsigned long gfn_to_hva_memslot_prot(struct kvm_memory_slot *slot,
						    gfn_t gfn, bool *writable)
{
	unsigned long hva = __gfn_to_hva_many(slot, gfn, NULL, false);

	if (!kvm_is_error_hva(hva) && writable)
		*writable = !memslot_is_readonly(slot);

	return hva;
}

/* include/linux/minmax.h (tools/include has min_t() and max_t() only) */
#define min3(x, y, z)	min((typeof(x))min(x, y), z)
#define clamp_t(type, val, lo, hi)	min_t(type, max_t(type, val, lo), hi)

/* lib/string.c (semantics; the kernel's copies a word at a time) */
static inline ssize_t strscpy(char *dest, const char *src, size_t count)
{
	size_t i;

	if (count == 0 || count > INT_MAX)
		return -E2BIG;
	for (i = 0; i < count; i++) {
		dest[i] = src[i];
		if (!src[i])
			return i;
	}
	dest[count - 1] = '\0';
	return -E2BIG;
}

/* lib/string.c */
static inline bool sysfs_streq(const char *s1, const char *s2)
{
	while (*s1 && *s1 == *s2) {
		s1++;
		s2++;
	}

	if (*s1 == *s2)
		return true;
	if (!*s1 && *s2 == '\n' && !s2[1])
		return true;
	if (*s1 == '\n' && !s1[1] && !*s2)
		return true;
	return false;
}

/* lib/string.c (semantics) */
static inline void *memchr_inv(const void *start, int c, size_t bytes)
{
	const u8 *p = start;
	u8 value = c;

	for (; bytes; bytes--, p++)
		if (*p != value)
			return (void *)p;
	return NULL;
}

/* lib/kstrtox.c; isxdigit() and _tolower() are glibc's, for ASCII the kernel's */
#define KSTRTOX_OVERFLOW	(1U << 31)

static inline const char *_parse_integer_fixup_radix(const char *s,
						     unsigned int *base)
{
	if (*base == 0) {
		if (s[0] == '0') {
			if (_tolower(s[1]) == 'x' && isxdigit(s[2]))
				*base = 16;
			else
				*base = 8;
		} else
			*base = 10;
	}
	if (*base == 16 && s[0] == '0' && _tolower(s[1]) == 'x')
		s += 2;
	return s;
}

static inline unsigned int _parse_integer(const char *s, unsigned int base,
					  unsigned long long *p)
{
	unsigned long long res = 0;
	unsigned int rv = 0;

	for (;;) {
		unsigned int c = *s;
		unsigned int lc = c | 0x20;
		unsigned int val;

		if ('0' <= c && c <= '9')
			val = c - '0';
		else if ('a' <= lc && lc <= 'f')
			val = lc - 'a' + 10;
		else
			break;

		if (val >= base)
			break;
		if (unlikely(res & (~0ull << 60))) {
			if (res > (ULLONG_MAX - val) / base)
				rv |= KSTRTOX_OVERFLOW;
		}
		res = res * base + val;
		rv++;
		s++;
	}
	*p = res;
	return rv;
}

static inline int kstrtoull(const char *s, unsigned int base,
			    unsigned long long *res)
{
	unsigned long long _res;
	unsigned int rv;

	if (s[0] == '+')
		s++;
	s = _parse_integer_fixup_radix(s, &base);
	rv = _parse_integer(s, base, &_res);
	if (rv & KSTRTOX_OVERFLOW)
		return -ERANGE;
	if (rv == 0)
		return -EINVAL;
	s += rv;
	if (*s == '\n')
		s++;
	if (*s)
		return -EINVAL;
	*res = _res;
	return 0;
}

static inline int kstrtouint(const char *s, unsigned int base,
			     unsigned int *res)
{
	unsigned long long tmp;
	int rv;

	rv = kstrtoull(s, base, &tmp);
	if (rv < 0)
		return rv;
	if (tmp != (unsigned int)tmp)
		return -ERANGE;
	*res = tmp;
	return 0;
}

/* fs/sysfs/file.c; the kernel's vscnprintf() returns what it wrote. */
static inline int shim_vscnprintf(char *buf, size_t size, const char *fmt,
				  va_list args)
{
	int i = vsnprintf(buf, size, fmt, args);

	if (i < 0)
		return 0;
	if ((size_t)i < size)
		return i;
	return size ? size - 1 : 0;
}

__attribute__((format(printf, 2, 3)))
static inline int sysfs_emit(char *buf, const char *fmt, ...)
{
	va_list args;
	int len;

	if (WARN_ON(!buf || offset_in_page(buf)))
		return 0;
	va_start(args, fmt);
	len = shim_vscnprintf(buf, PAGE_SIZE, fmt, args);
	va_end(args);
	return len;
}

__attribute__((format(printf, 3, 4)))
static inline int sysfs_emit_at(char *buf, int at, const char *fmt, ...)
{
	va_list args;
	int len;

	if (WARN_ON(!buf || offset_in_page(buf) || at < 0 || at >= (int)PAGE_SIZE))
		return 0;
	va_start(args, fmt);
	len = shim_vscnprintf(buf + at, PAGE_SIZE - at, fmt, args);
	va_end(args);
	return len;
}

/* include/linux/moduleparam.h (the fields the core uses) */
struct kernel_param;

struct kernel_param_ops {
	unsigned int flags;
	int (*set)(const char *val, const struct kernel_param *kp);
	int (*get)(char *buffer, const struct kernel_param *kp);
	void (*free)(void *arg);
};

struct kernel_param {
	const char *name;
	struct module *mod;
	const struct kernel_param_ops *ops;
	const u16 perm;
	void *arg;
};

/* kernel/params.c: STANDARD_PARAM_DEF(uint, ...) */
static inline int param_get_uint(char *buffer, const struct kernel_param *kp)
{
	return snprintf(buffer, PAGE_SIZE, "%u\n", *((unsigned int *)kp->arg));
}

/* include/linux/seq_file.h */
#define DEFINE_SHOW_ATTRIBUTE(__name)					\
static int __name ## _open(struct inode *inode, struct file *file)	\
{									\
	return single_open(file, __name ## _show, inode->i_private);	\
}									\
									\
static const struct file_operations __name ## _fops = {			\
	.owner		= THIS_MODULE,					\
	.open		= __name ## _open,				\
	.read		= seq_read,					\
	.llseek		= seq_lseek,					\
	.release	= single_release,				\
}

#endif /* __SHIM_KERNEL_COPIES_H */
