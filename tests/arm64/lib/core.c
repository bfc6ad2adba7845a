// SPDX-License-Identifier: GPL-2.0
/*
 * The arm64 build's copy of the core both in-VM test libraries share
 * (reporting, /dev/kvm, binary stats, clock): tests/arm64/run-vm.sh
 * compiles the .c files of lib/, tests/vm's build those of tests/vm/lib.
 */
#include "../../vm/lib/kt_core.c"
