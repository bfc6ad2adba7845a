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

#include <kvm/prefetch.h>

#endif /* __KVM_PREFETCH_INTERNAL_H */
