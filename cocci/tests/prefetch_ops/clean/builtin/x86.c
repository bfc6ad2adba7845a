// SPDX-License-Identifier: GPL-2.0-only
/* The module init and exit functions of the builtin fixture. */
#include <kvm/prefetch.h>

static int __init kvm_x86_init(void)
{
	return kvm_prefetch_init();
}
module_init(kvm_x86_init);

static void __exit kvm_x86_exit(void)
{
	kvm_prefetch_exit();
}
module_exit(kvm_x86_exit);
