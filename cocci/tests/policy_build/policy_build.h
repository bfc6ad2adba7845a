/* SPDX-License-Identifier: GPL-2.0-only */
/* The build fixture's window callback: each case's file defines it. */
#ifndef __POLICY_BUILD_H
#define __POLICY_BUILD_H

#include <linux/kvm_prefetch.h>

bool policy_build_window(const struct kvm_prefetch_state *st,
			 const struct kvm_prefetch_fault *f,
			 struct kvm_prefetch_window *w);

#endif /* __POLICY_BUILD_H */
