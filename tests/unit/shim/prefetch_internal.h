/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace replacement of kvm-policy/prefetch_internal.h, with the same
 * include guard: a test includes this first, then the kernel .c file, whose
 * own #include "prefetch_internal.h" is then skipped (the tools/testing/vma
 * pattern).
 *
 *   custom.h  switches and counters the tests use
 *   stubs.h   stand-ins for kernel infrastructure (includes dup.h)
 *   dup.h     values, structures and helpers copied from the kernel
 */
#ifndef __KVM_PREFETCH_INTERNAL_H
#define __KVM_PREFETCH_INTERNAL_H

#include "custom.h"
#include "stubs.h"

#include <linux/kvm_prefetch.h>

/* Keep in sync with kvm-policy/prefetch_internal.h. */

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
