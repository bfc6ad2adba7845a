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
#                  [--timeout SECONDS] [--stall SECONDS] [--quiet]
#                  [--append ARGS] [--plugin SO[,ARG=V...]]
# --stall: kill the guest when the console is silent this long (a wedged
# guest), after saving QEMU's view of the vCPUs in LOG.qemu-state.
# --plugin: load a TCG plugin into QEMU (-plugin), e.g. the instruction
# meter of "make cost".
# --retry-wedged: if the guest wedged and no test had failed, say so and
# run everything once more (LOG.retry); a second wedge fails.  A wedge of
# unknown cause has been seen a few times under heavy host load (see
# sysfs-docs/testing.rst, "Known problems of the test setup").
set -uo pipefail

timeout=1500
stall=300
retry=0
quiet=0
args=("$@")
append=""
plugin=()
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift ;;
	--initrd) initrd=$2; shift ;;
	--mode) mode=$2; shift ;;
	--log) log=$2; shift ;;
	--timeout) timeout=$2; shift ;;
	--stall) stall=$2; shift ;;
	--retry-wedged) retry=1 ;;
	--append) append="$append $2"; shift ;;
	--plugin) plugin=(-plugin "$2"); shift ;;
	--quiet) quiet=1 ;;
	*) echo "run-vm.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done

SPLAT='WARNING:|BUG:|Oops|Call Trace|general protection|kernel BUG|Kernel panic|INFO: rcu|rcu_.*stall|self-detected stall|possible recursive locking|circular locking|lockdep|UBSAN|KASAN|refcount_t:|list_add corruption|list_del corruption|suspicious RCU usage|inconsistent lock state|DEBUG_LOCKS_WARN_ON|bad unlock balance|held lock freed|lock held when returning|sleeping function called from invalid context|scheduling while atomic|context switch within RCU read-side|KFENCE: |new suspected memory leak|unreferenced object'
# Lines that match SPLAT but are no report (tests/vm/init has the same).
BENIGN='RCU lockdep checking is enabled'

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

# Single-threaded TCG: with one host thread per vCPU (MTTCG) the guest
# wedged in its int3 handler while kvm_amd.ko loaded and patched static
# calls (cross-modifying code), twice in about forty runs.  One thread
# runs both vCPUs in turn, and on this 2-core machine is also faster.
# The kernel runs with nokaslr so that the RIPs in a saved vCPU state
# can be looked up in /proc/kallsyms of any boot of the same kernel
# (Debian's System.map is a stub).  no_timer_check: on a host busy with
# other guests, the kernel's boot-time check of the IO-APIC timer has
# seen too few ticks and panicked ("IO-APIC + timer doesn't work!");
# QEMU's timer works, so the check only measures the host's load.
# The monitor lets us dump the vCPUs' state if the guest stops talking.
port=$(( 40000 + $$ % 20000 ))
: > "$log"
# KP_SMP and KP_QEMU_ARGS (word-split) are for experiments only; KP_MEM
# (default 2G) is the test VM's memory (the QEMU rig, tests/qemu/, needs 3G).
# shellcheck disable=SC2086
qemu-system-x86_64 -machine q35 -accel tcg,thread=single -cpu max -m "${KP_MEM:-2G}" \
	-smp "${KP_SMP:-2}" ${KP_QEMU_ARGS:-} "${plugin[@]}" \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 quiet nokaslr no_timer_check kp.mode=$mode $append" \
	-nographic -no-reboot -nic none -serial stdio \
	-monitor tcp:127.0.0.1:$port,server,nowait </dev/null >> "$log" 2>&1 &
qpid=$!
tail -n +1 -f --pid=$qpid "$log" | filter &
tpid=$!

# Kill the guest after $timeout seconds, or after $stall seconds without
# a byte on the console (a wedged guest), dumping QEMU's view first.
last_size=-1
last_change=$(date +%s)
verdict=""
while kill -0 $qpid 2>/dev/null; do
	sleep 5
	now=$(date +%s)
	size=$(stat -c %s "$log")
	if [ "$size" != "$last_size" ]; then
		last_size=$size
		last_change=$now
	fi
	if [ $(( now - start )) -ge "$timeout" ]; then
		verdict="timeout after $timeout s"
	elif [ $(( now - last_change )) -ge "$stall" ]; then
		verdict="no console output for $stall s"
	fi
	if [ -n "$verdict" ]; then
		if exec 3<>/dev/tcp/127.0.0.1/$port; then
			printf 'info status\ninfo registers -a\n' >&3
			timeout 5 cat <&3 | tr -cd '[:print:]\n' \
				> "$log.qemu-state" 2>/dev/null
			exec 3>&-
		fi
		kill $qpid 2>/dev/null
		sleep 2
		kill -9 $qpid 2>/dev/null
		break
	fi
done
wait $qpid 2>/dev/null
qemu_rc=$?
wait $tpid 2>/dev/null
secs=$(( $(date +%s) - start ))
if [ -n "$verdict" ]; then
	echo "run-vm: guest killed: $verdict (vCPU state in $log.qemu-state)" | tee -a "$log"
fi

tr -d '\r' < "$log" > "$log.clean"
awk -v splat="$SPLAT" -v benign="$BENIGN" -v qemu_rc="$qemu_rc" -v secs="$secs" \
    -v wedged="$([ -n "$verdict" ] && echo 1 || echo 0)" -v retry="$retry" \
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
	# make cost COST_PROF=1 prints the kernel symbol names, some of
	# which look like a report ("lockdep_assert_...").
	/^@@COSTSYM / { next }
	$0 ~ splat && $0 !~ benign { splats++; if (splats <= 20) print "splat: " $0 }
	END {
		if (!done && wedged && retry && fail == 0 && !splats) {
			print "run-vm: WEDGED: the guest stopped without a failed test; retrying once"
			exit 3
		}
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
rc=$?
if [ $rc = 3 ]; then
	# Once: the retry runs without --retry-wedged, on its own log.
	new=()
	for a in "${args[@]}"; do
		case $a in --retry-wedged) ;; *) new+=("$a") ;; esac
	done
	exec "$0" "${new[@]}" --log "$log.retry"
fi
exit $rc
