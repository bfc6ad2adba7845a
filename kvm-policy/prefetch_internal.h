/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel includes of the prefetch core (virt/kvm/prefetch*.c), all in
 * one place, so that the userspace unit tests can replace this one file
 * with a shim of the same include guard.  The core's own declarations are
 * in <kvm/prefetch.h>, which the shim includes as it is.
 */
#ifndef __KVM_PREFETCH_INTERNAL_H
#define __KVM_PREFETCH_INTERNAL_H

#include <linux/capability.h>
#include <linux/hugetlb.h>
#include <linux/debugfs.h>
#include <linux/kmod.h>
#include <linux/kvm_host.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/rculist.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <kvm/prefetch.h>

/* The base kernel's own form of a call (arch/x86/<base>/kvm-policy/). */
#include "prefetch_gup.h"

/*
 * The memslot flag of memory that only guest_memfd holds (Linux 6.18 and
 * later): GUP of the memslot's userspace address would not find the
 * guest's page.  0 where there is no such memslot.
 */
#ifdef KVM_MEMSLOT_GMEM_ONLY
#define KVM_PREFETCH_GMEM_ONLY	KVM_MEMSLOT_GMEM_ONLY
#else
#define KVM_PREFETCH_GMEM_ONLY	0
#endif

#endif /* __KVM_PREFETCH_INTERNAL_H */
