/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Internal header of the prefetch core (virt/kvm/prefetch*.c): every kernel
 * include the core needs comes from here, so that the userspace unit tests
 * can replace this one file with a shim of the same include guard.
 */
#ifndef __KVM_PREFETCH_INTERNAL_H
#define __KVM_PREFETCH_INTERNAL_H

#include <linux/capability.h>
#include <linux/hugetlb.h>
#include <linux/debugfs.h>
#include <linux/kmod.h>
#include <linux/kvm_host.h>
#include <linux/kvm_prefetch.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/rculist.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>

/* prefetch.c: the registry and the defaults */
bool kvm_prefetch_name_valid(const char *name, size_t size);
const struct kvm_prefetch_ops *kvm_prefetch_get_policy(const char *name);
void kvm_prefetch_put_policy(const struct kvm_prefetch_ops *ops);
const struct kvm_prefetch_ops *kvm_prefetch_get_default(void);
u32 kvm_prefetch_default_nr_pages(void);
u32 kvm_prefetch_default_gup(void);
const char *kvm_prefetch_gup_name(u32 gup);

/* prefetch_vm.c: per-VM state */
int kvm_prefetch_policy_check(const struct kvm_prefetch_policy *p);

#endif /* __KVM_PREFETCH_INTERNAL_H */
