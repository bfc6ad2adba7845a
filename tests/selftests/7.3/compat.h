/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Force-included (-include) into every KVM selftest we build from
 * Debian's linux-source-7.3 (in the base's Debian 13 root).  Nothing to
 * paper over so far: the tree builds as it is against our uAPI headers.
 */
#ifndef KVM_PREFETCH_SELFTESTS_COMPAT_H
#define KVM_PREFETCH_SELFTESTS_COMPAT_H
#endif
