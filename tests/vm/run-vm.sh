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
# --retry-wedged: if the guest wedged, or the outer QEMU aborted, and no
# test had failed, say so and run everything once more (LOG.retry); a
# second wedge or abort fails.  No layer of "make check" asks for it: a
# wedge fails the run (scripts/resolve-rips.sh names the code the vCPUs
# were in; sysfs-docs/testing.rst, "The outer emulator").
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

# The outer emulator (KP_OUTER): "current", the default, is Debian 13's
# QEMU unpacked by scripts/qemu-current.sh ("make deps") into
# build/qemu-current; "7.2" is Debian 12's own /usr/bin one, kept for
# comparison (and for the instruction meter of "make cost", whose plugin
# is built against it).  KP_TCG: "single" (the default: one thread runs
# the vCPUs in turn) or "multi" (one host thread per vCPU, so the test
# VM's vCPUs really run at the same time: "make vm-race" and the QEMU
# rig).  sysfs-docs/testing.rst, "The outer emulator", has the boots
# that chose these defaults, and the wedge that multi-threaded TCG still
# shows in prefetch_overlap.
# The kernel runs with nokaslr so that the RIPs in a saved vCPU state
# can be looked up in /proc/kallsyms of any boot of the same kernel
# (Debian's System.map is a stub).  no_timer_check: on a host busy with
# other guests, the kernel's boot-time check of the IO-APIC timer has
# seen too few ticks and panicked ("IO-APIC + timer doesn't work!");
# QEMU's timer works, so the check only measures the host's load.
# The monitor lets us dump the vCPUs' state if the guest stops talking.
top=$(cd "$(dirname "$0")/../.." && pwd)
outer=${KP_OUTER:-current}
tcg=${KP_TCG:-single}
case $outer in
current) qemu=$top/build/qemu-current/bin/qemu-system-x86_64 ;;
7.2) qemu=/usr/bin/qemu-system-x86_64 ;;
/*) qemu=$outer ;;	# an explicit binary, for experiments
*) echo "run-vm.sh: KP_OUTER=$outer: current, 7.2 or an absolute path" >&2; exit 2 ;;
esac
case $tcg in
single|multi) ;;
*) echo "run-vm.sh: KP_TCG=$tcg: single or multi" >&2; exit 2 ;;
esac
[ -x "$qemu" ] || { echo "run-vm.sh: no $qemu (make deps fetches it)" >&2; exit 2; }
# The monitor's port: above the ephemeral ports the kernel hands out to
# outgoing connections (ip_local_port_range; the watchdog's own monitor
# connections below take them), so that none holds it, and free now.  A
# port in 40000-59999 failed a boot with "Address already in use" on
# 2026-12-07, two test VMs beside a make check.
eph_max=$(awk '{ print $2 }' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
base=$(( ${eph_max:-60999} + 1 ))
[ "$base" -le 64000 ] || base=40000
for ((try = 0; try < 50; try++)); do
	port=$(( base + ($$ + try * 97) % (65535 - base) ))
	(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break
done
: > "$log"
# KP_SMP and KP_QEMU_ARGS (word-split) are for experiments only; KP_MEM
# (default 2G) is the test VM's memory (the QEMU rig, tests/qemu/, needs 3G).
# shellcheck disable=SC2086
echo "run-vm: outer $("$qemu" --version | head -1), tcg thread=$tcg, ${KP_SMP:-2} vCPUs" >> "$log"
# nohz=off: an idle vCPU keeps its tick.  The outer emulator can lose the
# IPI that hands a woken task to a halted vCPU (below); the task then
# waited for that vCPU's next interrupt, which an idle vCPU without a
# tick never had.  A clean-clone make check of issue 50 (deb-test, 6.12)
# sat 300 s waiting for a VMM that had been sent SIGTERM, every vCPU
# halted and a key press no help, until the test's guard killed it; the
# VMM it left behind kept kvm.ko from being reloaded for the tests after
# it.  Where that VMM was went unrecorded (ktsys_guard() prints it now);
# a lost wake-up is the likely cause, and with the tick such a task runs
# within 4 ms.  KP_NOHZ=1 leaves the kernel's default.
nohz=nohz=off
[ "${KP_NOHZ:-}" = 1 ] && nohz=
"$qemu" -machine q35 -accel "tcg,thread=$tcg" -cpu max -m "${KP_MEM:-2G}" \
	-smp "${KP_SMP:-2}" ${KP_QEMU_ARGS:-} "${plugin[@]}" \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 quiet nokaslr no_timer_check $nohz kp.mode=$mode $append" \
	-nographic -no-reboot -nic none -serial stdio \
	-monitor tcp:127.0.0.1:$port,server,nowait </dev/null >> "$log" 2>&1 &
qpid=$!
tail -n +1 -f --pid=$qpid "$log" | filter &
tpid=$!

# Lost wake-ups.  QEMU 7.2's TCG can lose an interrupt request it has
# raised for a vCPU: helper_vmrun() sets CPU_INTERRUPT_VIRQ in
# cs->interrupt_request with a plain read-modify-write, from the vCPU
# thread and without the iothread lock, while the iothread sets
# CPU_INTERRUPT_POLL or _HARD in the same word (an APIC timer expiring).
# The APIC then holds a deliverable vector in IRR that nothing delivers:
# a vCPU that halts with interrupts on stays halted (its one-shot timer
# has expired and will not fire again) until another interrupt comes.
# So after $wake_after seconds of console silence, look at every vCPU
# every two seconds for one halted with IF set and a vector in IRR above
# its PPR's class (a state that cannot last on a real CPU), found twice,
# a second apart: a wake-up is pending ("run-vm: wake-up pending").  If
# the vCPU takes it by itself within $lost_after seconds it was slow
# ("run-vm: slow wake-up: taken N s after ...", counted with its
# duration: another interrupt, such as an IPI, woke the vCPU and it took
# both); if not, it is lost ("run-vm: lost wake-up").  QEMU 11.1.3 has
# both read-modify-write fixes and still loses some (a CI run of
# 2026-12-06 stopped on one), so a lost wake-up gets a key press (an
# i8042 interrupt: the APIC is evaluated again), at most three, and is
# counted: "run-vm: lost wake-up healed", and the run goes on; one that
# three key presses do not heal fails the run.  KP_LOST_FAILS=1 fails
# the run at the first lost one instead (for counting them).  A slow
# wake-up is not a failure of its own: the test VM's kernel judges it
# (a wake-up late by 21 s is an RCU stall report, a splat).  KP_HEAL=1
# (for runs on QEMU 7.2 that must finish, e.g. "make cost") presses the
# key at once instead of waiting.
#
# The same emulator can drop an IPI before it reaches IRR: a task woken
# on a halted vCPU then waits there for that vCPU's next interrupt, for
# ever if it is idle with no timer armed (a CI run of 2026-12-06 hung
# 300 s so, with no pending wake-up to see).  So when every vCPU has
# been halted with the console silent for $idle_after seconds, one key
# press, counted ("run-vm: idle poke"), and whether the console spoke
# again after it.  A test VM really deadlocked stays so: the key
# press wakes nothing that waits.
# KP_WAKE_AFTER=0 turns the watchdog off.  sysfs-docs/testing.rst, "The
# outer emulator", has what each QEMU does.
heal=${KP_HEAL:-0}
lost_fails=${KP_LOST_FAILS:-0}
lost_after=${KP_LOST_AFTER:-60}
idle_after=${KP_IDLE_AFTER:-60}
wake_after=${KP_WAKE_AFTER:-3}
nr_cpus=${KP_SMP:-2}
# One line per vCPU: index, HLT, IF, highest vector in IRR (-1: none), PPR,
# RIP.
vcpu_wake_state() {
	local i cmds=""

	for ((i = 0; i < nr_cpus; i++)); do
		cmds+="cpu $i"$'\n'"info registers"$'\n'"info lapic"$'\n'
	done
	exec 3<>"/dev/tcp/127.0.0.1/$port" 2>/dev/null || return 1
	printf '%s' "$cmds" >&3
	timeout 2 cat <&3 | tr -cd '[:print:]\n' | awk '
		function hex(s,   i, c, v) {
			v = 0
			for (i = 1; i <= length(s); i++) {
				c = index("0123456789abcdef", tolower(substr(s, i, 1)))
				if (c == 0)
					break
				v = v * 16 + c - 1
			}
			return v
		}
		/[RE]FL=[0-9a-fA-F]+/ {
			match($0, /[RE]FL=[0-9a-fA-F]+/)
			rfl = hex(substr($0, RSTART + 4, RLENGTH - 4))
			hlt = ($0 ~ /HLT=1/) ? 1 : 0
			rip = "?"
			if (match($0, /[RE]IP=[0-9a-fA-F]+/))
				rip = substr($0, RSTART + 4, RLENGTH - 4)
		}
		/^IRR / {
			irr = -1
			for (i = 2; i <= NF; i++)
				if ($i ~ /^[0-9]+/ && $i + 0 > irr)
					irr = $i + 0
		}
		/ PPR 0x/ {
			match($0, / PPR 0x[0-9a-fA-F]+/)
			ppr = hex(substr($0, RSTART + 7, RLENGTH - 7))
			print n++, hlt, int(rfl / 512) % 2, irr, ppr, rip
		}'
	exec 3>&-
}
# The vCPUs of vcpu_wake_state()'s output that lost a wake-up.
lost_wakeups() {
	awk '$2 == 1 && $3 == 1 && $4 >= 0 && int($4 / 16) > int($5 / 16) {
		printf "%svCPU %d (vector %d in IRR, PPR 0x%02x)", sep, $1, $4, $5
		sep = ", "
	}'
}
# Where the vCPUs of vcpu_wake_state()'s output that run are: while one
# waits for a wake-up, what keeps the other busy (nokaslr: the RIPs are
# the same in every boot; scripts/resolve-rips.sh names them).
running_rips() {
	awk '$2 != 1 { printf "%svCPU %d at %s", sep, $1, $6; sep = ", " }
	     END { if (NR && !sep) printf "every vCPU halted" }'
}
# Whether every vCPU of vcpu_wake_state()'s output is halted.
all_halted() {
	awk '$2 != 1 { busy = 1 } END { exit (NR == 0 || busy) }'
}
# A key press: an i8042 interrupt, for which the APIC is evaluated again.
key_press() {
	if exec 3<>"/dev/tcp/127.0.0.1/$port"; then
		printf 'sendkey shift\n' >&3
		timeout 1 cat <&3 > /dev/null
		exec 3>&-
	fi
}
# The watchdog's own lines in the log are no sign of life: they must not
# hold off the stall verdict (CI of issue 50: a silent guest with a slow
# wake-up every few seconds ran into the 1500 s timeout instead of the
# 300 s stall, and the log never said what the guest was doing).
note() {
	echo "$*" >> "$log"
	last_size=$(stat -c %s "$log")
}
pokes=0
wakeups=0
healed=0
slow=0
pending_since=""
idle_pokes=0
idle_resumed=0
idle_poked_at=""

# Kill the guest after $timeout seconds, or after $stall seconds without
# a byte on the console (a wedged guest), dumping QEMU's view first.
last_size=-1
last_change=$(date +%s)
verdict=""
while kill -0 $qpid 2>/dev/null; do
	sleep 2
	now=$(date +%s)
	size=$(stat -c %s "$log")
	if [ "$size" != "$last_size" ]; then
		last_size=$size
		last_change=$now
	fi
	# (Right after a key press, or while a wake-up is pending, whatever
	# the console did.)
	if [ "$wake_after" -gt 0 ] &&
	   { [ $pokes -gt 0 ] || [ -n "$pending_since" ] ||
	     [ $(( now - last_change )) -ge "$wake_after" ]; }; then
		state=$(vcpu_wake_state)
		lost=$(echo "$state" | lost_wakeups)
		# A second look a second later: the state must last.
		[ -n "$lost" ] && [ -z "$pending_since" ] && sleep 1 &&
			state=$(vcpu_wake_state) &&
			lost=$(echo "$state" | lost_wakeups)
		if [ -z "$lost" ]; then
			if [ $pokes -gt 0 ]; then
				healed=$((healed + 1))
				note "run-vm: lost wake-up healed after $pokes key press(es)"
			elif [ -n "$pending_since" ]; then
				slow=$((slow + 1))
				note "run-vm: slow wake-up: taken $(( $(date +%s) - pending_since )) s after it was seen pending"
			fi
			pokes=0
			pending_since=""
			if [ -z "$idle_poked_at" ] &&
			   [ $(( now - last_change )) -ge "$idle_after" ] &&
			   echo "$state" | all_halted; then
				idle_pokes=$((idle_pokes + 1))
				idle_poked_at=$now
				note "run-vm: idle poke: every vCPU halted, the console silent for $(( now - last_change )) s: a key press"
				key_press
			fi
		elif [ -z "$pending_since" ] && [ "$heal" != 1 ]; then
			pending_since=$(( $(date +%s) - 1 ))
			note "run-vm: wake-up pending: halted with an interrupt pending: $lost; $(echo "$state" | running_rips)"
		elif [ "$heal" = 1 ] ||
		     [ $(( $(date +%s) - pending_since )) -ge "$lost_after" ]; then
			if [ $pokes -eq 0 ]; then
				wakeups=$((wakeups + 1))
				note "run-vm: lost wake-up: ${pending_since:+still pending after $(( $(date +%s) - pending_since )) s: }$lost"
			fi
			if [ "$lost_fails" = 1 ] || [ $pokes -ge 3 ]; then
				verdict="the outer QEMU lost a wake-up"
			else
				pokes=$((pokes + 1))
				note "run-vm: a key press for it ($pokes)"
				key_press
			fi
		fi
	fi
	# Whether the console spoke again after an idle poke.
	if [ -n "$idle_poked_at" ] && [ "$last_change" -gt "$idle_poked_at" ]; then
		idle_resumed=$((idle_resumed + 1))
		note "run-vm: idle poke: the console spoke again $(( last_change - idle_poked_at )) s after it"
		idle_poked_at=""
	fi
	if [ -n "$verdict" ]; then
		:
	elif [ $(( now - start )) -ge "$timeout" ]; then
		verdict="timeout after $timeout s"
	elif [ $(( now - last_change )) -ge "$stall" ]; then
		verdict="no console output for $stall s"
	fi
	if [ -n "$verdict" ]; then
		if exec 3<>/dev/tcp/127.0.0.1/$port; then
			# The registers, then each vCPU's next instructions and APIC.
			printf 'info status\ninfo registers -a\n' >&3
			for ((i = 0; i < nr_cpus; i++)); do
				printf 'cpu %d\nx/12i $pc\ninfo lapic\n' "$i" >&3
			done
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
if [ $wakeups -gt 0 ]; then
	echo "run-vm: $wakeups lost wake-up(s) of the outer QEMU, $healed healed by a key press" | tee -a "$log"
fi
if [ $idle_pokes -gt 0 ]; then
	echo "run-vm: $idle_pokes idle poke(s), after $idle_resumed of them the console spoke again" | tee -a "$log"
fi
if [ $slow -gt 0 ]; then
	echo "run-vm: $slow slow wake-up(s) of the outer QEMU (taken within $lost_after s)" | tee -a "$log"
fi
if [ -n "$verdict" ]; then
	echo "run-vm: guest killed: $verdict (vCPU state in $log.qemu-state)" | tee -a "$log"
	# Where it was, on the terminal too: a CI excerpt is the output's
	# tail, and the log stays on the CI machine.
	cur=$(tr -d '\r' < "$log" | awk '/^@@BEGIN / { t = $2 } /^@@END / { t = "" } END { print t }')
	echo "run-vm: the guest was in ${cur:-no test program (boot, module load, between tests)}; its last console lines:"
	tr -d '\r' < "$log" | grep -av '^run-vm: ' | tail -n 15 | sed 's/^/run-vm: | /'
	[ -f "$log.qemu-state" ] && grep -ao 'RIP=[0-9a-f]* RFL=[0-9a-f]* .*HLT=[01]' "$log.qemu-state" |
		awk '{ print "run-vm: vCPU " n++ ": " $0 }'
fi

tr -d '\r' < "$log" > "$log.clean"
awk -v splat="$SPLAT" -v benign="$BENIGN" -v qemu_rc="$qemu_rc" -v secs="$secs" \
    -v wedged="$([ -n "$verdict" ] && echo 1 || echo 0)" -v retry="$retry" \
    -v lost="$(echo "$verdict" | grep -q wake-up && echo "$wakeups" || echo 0)" \
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
	# The outer QEMU itself gave up (QEMU 7.2 TCG: "tcg_handle_interrupt:
	# assertion failed: (qemu_mutex_iothread_locked())", seen with
	# nested guests on stock KVM too): not the test VM kernel'"'"'s fault.
	/^ERROR:.*assertion failed/ && !done { qemu_abort = $0 }
	# make cost COST_PROF=1 prints the kernel symbol names, some of
	# which look like a report ("lockdep_assert_...").
	/^@@COSTSYM / { next }
	$0 ~ splat && $0 !~ benign { splats++; if (splats <= 20) print "splat: " $0 }
	END {
		if (lost) {
			print "FAIL: the outer QEMU lost " lost " wake-up(s) that key presses did not heal (run-vm.sh)"
			fail++
		}
		if (!done && wedged && retry && fail == 0 && !splats) {
			print "run-vm: WEDGED: the guest stopped without a failed test; retrying once"
			exit 3
		}
		if (!done && qemu_abort != "" && retry && fail == 0 && !splats) {
			print "run-vm: the outer QEMU aborted (" qemu_abort ") without a failed test; retrying once"
			exit 3
		}
		if (!done && qemu_abort != "")
			print "run-vm: the outer QEMU aborted: " qemu_abort
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
