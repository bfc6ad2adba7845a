/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Force-included (-include) into every KVM selftest we build from
 * Debian's linux-source-6.1.
 *
 * Debian's 6.1 stable tree carries a backport of a dirty_log_test.c fix
 * that uses TEST_ASSERT_EQ(), a helper that only exists in later
 * test_util.h versions; without it the test does not link.  Provide a
 * minimal equivalent on top of 6.1's TEST_ASSERT().
 *
 * The same tree's uapi <asm/kvm.h> uses __DECLARE_FLEX_ARRAY(), which
 * comes from the uapi <linux/stddef.h>; tests that include <asm/kvm.h>
 * first (steal_time.c) get tools/include's <linux/types.h>, which does
 * not pull it in.  Include it up front.
 *
 * This header is also seen by the selftests' assembler sources.
 */
#ifndef KVM_PREFETCH_SELFTESTS_COMPAT_H
#define KVM_PREFETCH_SELFTESTS_COMPAT_H

#ifndef __ASSEMBLER__
#include <linux/stddef.h>
#endif

#define TEST_ASSERT_EQ(a, b)						\
	TEST_ASSERT((a) == (b), "%s == %s failed: %#lx != %#lx",	\
		    #a, #b, (unsigned long)(a), (unsigned long)(b))

#endif
