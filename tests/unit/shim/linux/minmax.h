/* SPDX-License-Identifier: GPL-2.0 */
/* Shim: min_t()/max_t() come from kernel_stubs.h; clamp_t() as in the kernel. */
#include "../kernel_stubs.h"
#ifndef clamp_t
#define clamp_t(type, val, lo, hi)	min_t(type, max_t(type, val, lo), hi)
#endif
