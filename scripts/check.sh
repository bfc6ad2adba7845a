#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make check": every layer on the three bases, in two streams that
# share the machine's two cores.  The test VMs (TCG) keep about one core
# busy and the compilers want two, so while one stream boots test VMs the
# other builds and runs the static checks:
#
#   set-up   deps (three bases), deps-test, 6.1 modules and patches
#   phase 1  VMs:    6.1 vm-test, 6.1 selftests, 6.1 qemu-check
#            builds: 6.1 unit, 6.1 static, 6.12 modules, 6.12 static,
#                    deb-test (DKMS builds for both Debian 12 bases, two
#                    boots), 7.3 modules, 7.3 static
#   phase 2  VMs:    6.12 vm-test, 6.12 selftests
#            other:  patches-bisect of 7.3 (the primary series), then
#                    7.3's vm-test, a second test VM once the build is
#                    done
#   phase 3  VMs:    7.3 selftests (those of the MMU, memory and
#                    guest_memfd; all: make selftests KERNEL=7.3)
#
# patches-bisect of the backports (6.1, 6.12) is "make check-bisect".
# Usage: check.sh  (from the top of the tree, as make check runs it)

set -uo pipefail
top=$PWD
times=$top/build/check-times.txt
mk=(make --no-print-directory)

layer() {
	local label=$1
	shift
	scripts/timed.sh "$times" "$label" "${mk[@]}" "$@"
}

start=$(date +%s)
mkdir -p build
rm -f "$times"
rm -rf build/results build/6.12/results build/7.3/results
# Streams (and the set-up) that stopped, or whose test VM layers failed:
# each counts as one failure in the last line, whose own layers may all
# have passed (a layer that stopped before its counts).
stopped=0

layer "deps" deps &&
layer "6.12 deps" deps KERNEL=6.12 &&
layer "7.3 deps" deps KERNEL=7.3 &&
layer "6.1 deps-test" KERNEL=6.1 deps-test &&
layer "6.1 modules, patches" KERNEL=6.1 modules patches || stopped=1

# phase NAME VMS_FUNCTION BUILDS_FUNCTION
phase() {
	local name=$1 vms=$2 builds=$3 log=$top/build/check-builds-$1.log
	local bpid rc_v rc_b

	echo "check: $name: test VMs here, builds in $log"
	$builds > "$log" 2>&1 &
	bpid=$!
	$vms
	rc_v=$?
	wait $bpid
	rc_b=$?
	echo "check: $name: the builds stream ($log):"
	cat "$log"
	if [ $rc_v != 0 ]; then
		echo "check: $name: a layer of the test VM stream failed (status $rc_v)"
		stopped=$((stopped + 1))
	fi
	if [ $rc_b != 0 ]; then
		echo "check: $name: the builds stream stopped (status $rc_b)"
		stopped=$((stopped + 1))
	fi
}

# The test VM layers of a stream are independent of each other (they
# boot what set-up and the builds stream made): a failed one does not
# keep the next from running, so that one run (all CI shows) says
# whether the others pass.  The stream's status is the last failure's.
vms1() {
	local rc=0
	layer "6.1 vm-test" KERNEL=6.1 NOBUILD=1 VM_RETRY=1 vm-test || rc=$?
	layer "6.1 selftests" KERNEL=6.1 NOBUILD=1 selftests || rc=$?
	layer "6.1 qemu-check" KERNEL=6.1 NOBUILD=1 qemu-check || rc=$?
	return $rc
}
builds1() {
	layer "6.1 unit" KERNEL=6.1 unit &&
	layer "6.1 static" KERNEL=6.1 NOBUILD=1 static &&
	layer "6.12 modules, patches" KERNEL=6.12 modules patches &&
	layer "6.12 static" KERNEL=6.12 NOBUILD=1 static &&
	layer "6.1 deb-test" KERNEL=6.1 NOBUILD=1 deb-test &&
	layer "7.3 modules, patches" KERNEL=7.3 modules patches &&
	layer "7.3 static" KERNEL=7.3 NOBUILD=1 static
}
vms2() {
	local rc=0
	layer "6.12 vm-test" KERNEL=6.12 NOBUILD=1 VM_RETRY=1 vm-test || rc=$?
	layer "6.12 selftests" KERNEL=6.12 NOBUILD=1 selftests || rc=$?
	return $rc
}
builds2() {
	layer "7.3 patches-bisect" KERNEL=7.3 NOBUILD=1 patches-bisect &&
	layer "7.3 vm-test" KERNEL=7.3 NOBUILD=1 VM_RETRY=1 vm-test
}
# 7.3's whole KVM selftests take over 30 minutes under TCG (103 runs,
# "make selftests KERNEL=7.3"); make check runs those of the MMU, memory
# and guest_memfd, stock against ours.
ST_73="pre_fault_memory_test guest_memfd_test demand_paging_test
	demand_paging_test_uffd dirty_log_test dirty_log_test_ring
	dirty_log_test_clear dirty_log_perf_test kvm_page_table_test
	memslot_modification_stress_test memslot_perf_test
	access_tracking_perf_test private_mem_conversions_test
	private_mem_kvm_exits_test"
vms3() {
	layer "7.3 selftests" KERNEL=7.3 NOBUILD=1 TESTS="$(echo $ST_73)" selftests
}
none() {
	:
}

if [ $stopped = 0 ]; then
	phase 1 vms1 builds1
	phase 2 vms2 builds2
	phase 3 vms3 none
fi
echo "wall-clock $(( $(date +%s) - start )) s" >> "$times"
TIMES=$times EXTRA_FAILED=$stopped scripts/check-summary.sh \
	6.1="$top/build/results" 6.12="$top/build/6.12/results" \
	7.3="$top/build/7.3/results"
