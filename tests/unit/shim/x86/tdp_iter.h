/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shim for arch/x86/kvm/mmu/tdp_iter.h: the engine walks SPTEs with it
 * only for the usage harvest (CONFIG_KVM_PREFETCH_USAGE), which the unit
 * tests do not build.
 */
#ifndef SHIM_X86_TDP_ITER_H
#define SHIM_X86_TDP_ITER_H
#endif
