/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the prefetch_ops fixtures take as given: a window callback, and
 * ops tables for those fixtures that test registration only (the tables
 * themselves are tested where they are defined).  Fixtures are parsed,
 * never compiled or linked.
 */
#ifndef __COCCI_FIXTURE_POLICY_H
#define __COCCI_FIXTURE_POLICY_H

#include <linux/kvm_prefetch.h>

bool stride_window(const struct kvm_prefetch_state *st,
		   const struct kvm_prefetch_fault *f,
		   struct kvm_prefetch_window *w);

extern struct kvm_prefetch_ops alpha_ops;
extern struct kvm_prefetch_ops beta_ops;
extern struct kvm_prefetch_ops gamma_ops;

#endif /* __COCCI_FIXTURE_POLICY_H */
