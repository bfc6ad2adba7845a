// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_ops.cocci must report each line that ends in an expect-warning
 * comment: ops tables without a name, an owner of THIS_MODULE or the
 * required window() callback.
 */
#include <linux/kvm_prefetch.h>

#include "fixture_policy.h"

static struct kvm_prefetch_ops no_owner = { /* expect-warning */
	.window	= stride_window,
	.name	= "stride",
};

static struct kvm_prefetch_ops null_owner = { /* expect-warning */
	.window	= stride_window,
	.name	= "stride2",
	.owner	= NULL,
};

static struct kvm_prefetch_ops no_window = { /* expect-warning */
	.name	= "stride3",
	.owner	= THIS_MODULE,
};

struct kvm_prefetch_ops no_name = { /* expect-warning */
	.owner	= THIS_MODULE,
	.window	= stride_window,
};
