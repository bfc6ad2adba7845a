// SPDX-License-Identifier: GPL-2.0-only
/*
 * A policy module done right: it uses <linux/kvm_prefetch.h> only, and
 * builds and links against kvm.ko's exports.
 */
#include <linux/kvm_prefetch.h>

#include "policy_build.h"

bool policy_build_window(const struct kvm_prefetch_state *st,
			 const struct kvm_prefetch_fault *f,
			 struct kvm_prefetch_window *w)
{
	return kvm_prefetch_aligned_window(f->gfn, f->mapped_pages,
					   st->nr_pages, w);
}
