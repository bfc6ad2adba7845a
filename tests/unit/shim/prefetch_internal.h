/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace replacement of kvm-policy/prefetch_internal.h, with the same
 * include guard: a test includes this first, then the kernel .c file, whose
 * own #include "prefetch_internal.h" is then skipped (the tools/testing/vma
 * pattern).
 *
 *   control.h        switches the tests flip and counters of what the
 *                    kernel code did
 *   kernel_stubs.h   stand-ins for kernel infrastructure, checking the
 *                    kernel's rules (includes kernel_copies.h)
 *   kernel_copies.h  values, structures and helpers copied from the
 *                    kernel, each naming its source file
 *   arch_fake.h      the kvm_arch_*() hooks, steered by control.h
 *   x86/             the x86 KVM around the engine, for the tests of
 *                    arch/x86/kvm/mmu/prefetch.c (x86/kvm_x86.h says how)
 *   linux/           headers the kernel files include by name; they only
 *                    check that this file came first
 */
#ifndef __KVM_PREFETCH_INTERNAL_H
#define __KVM_PREFETCH_INTERNAL_H

#include "control.h"
#include "kernel_stubs.h"

#include <kvm/prefetch.h>

/* 6.1's form of the calls that differ between bases, on the stubs. */
#include "../../../arch/x86/6.1/kvm-policy/prefetch_gup.h"

/* 6.1 has no memslot that only guest_memfd holds. */
#define KVM_PREFETCH_GMEM_ONLY	0

#ifndef SHIM_X86_ENGINE
#include "arch_fake.h"
#endif

#endif /* __KVM_PREFETCH_INTERNAL_H */
