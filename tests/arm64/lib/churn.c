// SPDX-License-Identifier: GPL-2.0
/*
 * The arm64 build's copy of the churn tests' shared bookkeeping and
 * verdicts (tests/vm/lib/kt_churn.h), as lib/core.c is of kt_core.
 */
#include "../../vm/lib/kt_churn.c"
