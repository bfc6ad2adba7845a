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

/*
 * Record and replay (prefetch-api.rst, "Record and replay").  A recording
 * is the order in which the VM's guest first touched its pages; an order
 * is a header followed by runs of guest frames, each a __u64:
 * KVM_PREFETCH_RUN(gfn, npages), 1 to KVM_PREFETCH_RUN_MAX_PAGES frames
 * from gfn.  KVM_PREFETCH_ORDER reads a recording out in that format and
 * hands one to the replay policy.
 */
#define KVM_PREFETCH_RUN_GFN_BITS	52
#define KVM_PREFETCH_RUN_MAX_PAGES	4096
#define KVM_PREFETCH_RUN(gfn, npages)	((__u64)(gfn) | \
					 ((__u64)(npages) - 1) << KVM_PREFETCH_RUN_GFN_BITS)
#define KVM_PREFETCH_RUN_GFN(run)	((run) & ((1ULL << KVM_PREFETCH_RUN_GFN_BITS) - 1))
#define KVM_PREFETCH_RUN_PAGES(run)	(((run) >> KVM_PREFETCH_RUN_GFN_BITS) + 1)

#define KVM_PREFETCH_ORDER_MAGIC	0x4f50564bU	/* "KVPO" in memory */
#define KVM_PREFETCH_ORDER_VERSION	1
/* The recording reached its bound: later first touches are not in it. */
#define KVM_PREFETCH_ORDER_TRUNCATED	(1U << 0)

/* An order as a VMM saves it: this 64-byte header, then nr_runs runs. */
struct kvm_prefetch_order {
	__u32 magic;		/* KVM_PREFETCH_ORDER_MAGIC */
	__u32 version;		/* KVM_PREFETCH_ORDER_VERSION */
	__u64 nr_runs;		/* runs that follow the header */
	__u64 nr_pages;		/* the sum of their lengths */
	__u64 mem_pages;	/* pages in the recording VM's memslots */
	__u32 flags;		/* KVM_PREFETCH_ORDER_TRUNCATED */
	__u32 pad;		/* 0 */
	__u64 reserved[3];	/* 0 */
	__u64 runs[];
};

/* KVM_PREFETCH_ORDER operations. */
#define KVM_PREFETCH_RECORD_START	1	/* start a new recording */
#define KVM_PREFETCH_RECORD_STOP	2	/* stop recording, keep it */
#define KVM_PREFETCH_RECORD_READ	3	/* copy the recording to addr */
#define KVM_PREFETCH_REPLAY_LOAD	4	/* hand the order at addr to replay */
#define KVM_PREFETCH_ORDER_STATUS	5	/* only fill in the state */

/* KVM_PREFETCH_ORDER state bits. */
#define KVM_PREFETCH_STATE_RECORDING	(1U << 0)	/* recording now */
#define KVM_PREFETCH_STATE_TRUNCATED	(1U << 1)	/* the recording is full */
#define KVM_PREFETCH_STATE_LOADED	(1U << 2)	/* replay has an order */

struct kvm_prefetch_order_op {
	__u32 op;		/* KVM_PREFETCH_RECORD_*, _REPLAY_LOAD, _STATUS */
	__u32 flags;		/* must be 0 */
	__u64 addr;		/* READ, LOAD: a struct kvm_prefetch_order */
	__u64 size;		/* READ, LOAD: bytes at addr; READ out: needed */
	__u64 max_runs;		/* START: at most this many runs, 0 = the bound */
	/* Out, for every operation that succeeds: */
	__u32 state;		/* KVM_PREFETCH_STATE_* */
	__u32 pad;		/* must be 0 */
	__u64 rec_runs;		/* runs recorded */
	__u64 rec_pages;	/* pages they span */
	__u64 rec_dropped;	/* first touches not recorded (full, no slot) */
	__u64 rec_max_runs;	/* the recording's bound */
	__u64 replay_runs;	/* runs of the loaded order */
	__u64 replay_pos;	/* runs of it the replay went past, in order */
	__u64 reserved[3];	/* must be 0 */
};	/* 112 bytes */

#define KVM_PREFETCH_ORDER	_IOWR(KVMIO, 0xf2, struct kvm_prefetch_order_op)

#endif /* _UAPI_LINUX_KVM_PREFETCH_H */
