/* SPDX-License-Identifier: GPL-2.0 */
/* The engine's arch/x86/kvm/mmu.h: what it uses is in kvm_x86.h. */
#ifndef __SHIM_KVM_X86_H
#error "include the shim's x86/kvm_x86.h first"
#endif
