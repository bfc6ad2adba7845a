#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot Debian's kernel in QEMU (TCG, -cpu max: nested SVM with NPT) with
# the test initramfs, collect the serial console and judge the run.
#
# Exit status is non-zero if a test failed, a test exited non-zero without
# saying why, the kernel log shows a splat, or the guest panicked or hung
# (no @@DONE before the timeout).  The last line is "N passed, N failed,
# N skipped".
#
# usage: run-vm.sh --kernel K --initrd I --mode M --log FILE
#                  [--timeout SECONDS] [--quiet] [--append ARGS]
set -uo pipefail

timeout=1500
quiet=0
append=""
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift ;;
	--initrd) initrd=$2; shift ;;
	--mode) mode=$2; shift ;;
	--log) log=$2; shift ;;
	--timeout) timeout=$2; shift ;;
	--append) append=$2; shift ;;
	--quiet) quiet=1 ;;
	*) echo "run-vm.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done

SPLAT='WARNING:|BUG:|Oops|Call Trace|general protection|kernel BUG|Kernel panic|INFO: rcu|rcu_.*stall|self-detected stall|possible recursive locking|circular locking|lockdep|UBSAN|KASAN|refcount_t:|list_add corruption|list_del corruption'

mkdir -p "$(dirname "$log")"
start=$(date +%s)
# In quiet mode only the guest programs' own lines reach the terminal.
if [ $quiet = 1 ]; then
	# Firmware noise comes before @@MODULES; kernel lines start "[".
	filter() {
		tr -d '\r' | awk '/@@MODULES/ { on = 1; next }
			on && !/^(dmesg: |@@|\[ *[0-9]+\.[0-9]+\] )/ { print; fflush() }'
	}
else
	filter() { tr -d '\r'; }
fi
timeout --foreground -k 10 "$timeout" \
	qemu-system-x86_64 -machine q35 -accel tcg -cpu max -m 2G -smp 2 \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 quiet kp.mode=$mode $append" \
	-nographic -no-reboot -nic none -monitor none -serial stdio </dev/null 2>&1 |
	tee "$log" | filter
qemu_rc=${PIPESTATUS[0]}
secs=$(( $(date +%s) - start ))

tr -d '\r' < "$log" > "$log.clean"
awk -v splat="$SPLAT" -v qemu_rc="$qemu_rc" -v secs="$secs" \
    -v need_tests="$([ "$mode" = test ] && echo 1 || echo 0)" '
	/^PASS: / { pass++ }
	/^FAIL: / { fail++; sfail++ }
	/^SKIP: / { skip++ }
	/^@@BEGIN / { sfail = 0; spass = 0 }
	/^@@END / {
		rc = $NF; sub(/^rc=/, "", rc)
		if (rc != 0 && rc != 4 && sfail == 0) {
			print "FAIL: " $2 " exited with status " rc " without a FAIL line"
			fail++
		}
	}
	/^@@DONE/ { done = 1 }
	$0 ~ splat { splats++; if (splats <= 20) print "splat: " $0 }
	END {
		if (!done) {
			print "FAIL: guest did not finish (panic, hang or timeout; qemu status " qemu_rc ")"
			fail++
		}
		if (splats) {
			print "FAIL: " splats " kernel log line(s) look like a splat"
			fail++
		}
		if (need_tests && pass + fail == 0) {
			print "FAIL: no test ran"
			fail++
		}
		printf "vm: %d s in QEMU\n", secs
		if (need_tests || pass + fail + skip)
			printf "%d passed, %d failed, %d skipped\n", pass, fail, skip
		else if (fail == 0)
			print "vm: guest finished cleanly, no splat in the kernel log"
		exit(fail ? 1 : 0)
	}' "$log.clean"
