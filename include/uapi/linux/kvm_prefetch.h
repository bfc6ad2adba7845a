/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * KVM prefetch policies.
 *
 * Included at the end of <linux/kvm.h>; include that header, not this one.
 */
#ifndef _UAPI_LINUX_KVM_PREFETCH_H
#define _UAPI_LINUX_KVM_PREFETCH_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* Per-VM prefetch policy. */
#define KVM_CAP_PREFETCH_POLICY		1000	/* provisional, outside upstream's range */
#define KVM_PREFETCH_POLICY_NAME_MAX	16
#define KVM_PREFETCH_MAX_PAGES		262144
#define KVM_PREFETCH_GUP_DEFAULT	0
#define KVM_PREFETCH_GUP_NOFAULT	1
#define KVM_PREFETCH_GUP_FAST_ONLY	2

struct kvm_prefetch_policy {
	char  name[KVM_PREFETCH_POLICY_NAME_MAX];	/* NUL-terminated */
	__u32 nr_pages;		/* window in 4 KiB pages; 0 = the default */
	__u32 gup;		/* KVM_PREFETCH_GUP_* */
	__u32 flags;		/* must be 0 */
	__u32 pad;		/* must be 0 */
	__u64 reserved[4];	/* must be 0 */
};	/* 64 bytes */

#define KVM_SET_PREFETCH_POLICY	_IOW(KVMIO, 0xf0, struct kvm_prefetch_policy)
#define KVM_GET_PREFETCH_POLICY	_IOR(KVMIO, 0xf1, struct kvm_prefetch_policy)

#endif /* _UAPI_LINUX_KVM_PREFETCH_H */
