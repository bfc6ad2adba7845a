// SPDX-License-Identifier: GPL-2.0-only
/*
 * A policy module that calls KVM's own decision function, which only
 * kvm.ko may call.  run-policy-build.sh builds it twice:
 *  - as is, with the policy API only: <linux/kvm_prefetch.h> does not
 *    declare kvm_prefetch_decide(), so the compiler must stop at an
 *    implicit declaration;
 *  - with POLICY_BUILD_INTERNAL_HEADER, including KVM's internal header:
 *    it compiles, but kvm.ko does not export the function, so modpost
 *    must find it undefined.
 */
#include <linux/kvm_prefetch.h>
#ifdef POLICY_BUILD_INTERNAL_HEADER
#include <kvm/prefetch.h>
#endif

#include "policy_build.h"

bool policy_build_window(const struct kvm_prefetch_state *st,
			 const struct kvm_prefetch_fault *f,
			 struct kvm_prefetch_window *w)
{
	return kvm_prefetch_decide(st->kvm, f, w);
}
