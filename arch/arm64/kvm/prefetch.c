// SPDX-License-Identifier: GPL-2.0-only
/*
 * The arm64 prefetch engine (stage-2 MMU).  For now only what the generic
 * framework needs to build and to answer userspace: no window is mapped
 * yet, so prefetch is reported unsupported (KVM_CAP_PREFETCH_POLICY is 0
 * and KVM_SET_PREFETCH_POLICY fails) until the engine that maps windows
 * after user_mem_abort() lands.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kvm_host.h>
#include <kvm/prefetch.h>

/**
 * kvm_arch_prefetch_supported() - can prefetch run for a VM?
 * @kvm: the VM, or NULL for KVM_CHECK_EXTENSION on /dev/kvm
 *
 * Return: false: arm64 has no engine yet.
 */
bool kvm_arch_prefetch_supported(struct kvm *kvm)
{
	return false;
}
