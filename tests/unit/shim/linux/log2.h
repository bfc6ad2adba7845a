/* SPDX-License-Identifier: GPL-2.0 */
/* Shim: rounddown_pow_of_two() and friends come from kernel_copies.h. */
#include "../kernel_stubs.h"
