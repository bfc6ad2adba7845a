#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The summary of "make check": the last line of each layer's output
# (<results>/<layer>.txt), labelled once with the base and the layer's
# name, then the sum of their "N passed, N failed[, N skipped]" lines.
# Exits non-zero if any layer failed.  With TIMES=<file> (lines "<label>
# <seconds> s", scripts/timed.sh) the time of each step comes first;
# EXTRA_FAILED=n adds n failures (streams that stopped, or failed).
# Before the sum, one line counts the outer emulator's lost interrupts.
#
# Usage: check-summary.sh <base>=<results dir>...

set -eo pipefail
[ $# -ge 1 ] || { echo "usage: $0 <base>=<results dir>..." >&2; exit 2; }

if [ -n "${TIMES:-}" ] && [ -f "$TIMES" ]; then
	# "wall-clock" (the whole run) is not added to the layers' sum,
	# which is more than the wall clock when layers ran side by side.
	awk '/^wall-clock / { wall = $2; next }
	     { t += $(NF - 1); printf "time: %s\n", $0 }
	     END {
		printf "time: the layers add up to %d s (%d min)\n", t, (t + 30) / 60
		if (wall != "")
			printf "time: wall clock %d s (%d min)\n", wall, (wall + 30) / 60
	     }' "$TIMES"
fi
width=0
for arg in "$@"; do
	for f in "${arg#*=}"/*.txt; do
		label="${arg%%=*} $(basename "$f" .txt)"
		[ "${#label}" -le "$width" ] || width=${#label}
	done
done
for arg in "$@"; do
	for f in "${arg#*=}"/*.txt; do
		layer=$(basename "$f" .txt)
		last=$(tail -n1 "$f")
		# Most layers already start their last line with "<layer>: ".
		printf '%-*s %s\n' $((width + 1)) "${arg%%=*} $layer:" \
			"${last#"$layer: "}"
	done
done
# What failed, by name: a failed run's last lines are often all that is
# seen of it (CI shows its end).  For each layer whose last line counts
# failures, or has no counts at all, its first failures (a test VM's
# with the test program they came from, and the state of each thread of
# a test killed for its time), the kernel's first splat and how its test
# VM ended.
for arg in "$@"; do
	for f in "${arg#*=}"/*.txt; do
		last=$(tail -n1 "$f")
		[[ "$last" =~ [0-9]+\ passed,\ 0\ failed ]] && continue
		awk -v label="${arg%%=*} $(basename "$f" .txt)" '
		function out(line) {
			if (n++ < 8)
				printf "failed: %s: %s\n", label, substr(line, 1, 150)
		}
		/^@@BEGIN / { prog = $2 ": " }
		/^@@END / { prog = "" }
		/^(FAIL|not ok)/ { out(prog $0) }
		/^# guard: pid [0-9]+ thread [0-9]+: State:/ { out(prog $0) }
		/^@@ [a-z0-9_]+: pid [0-9]+ thread [0-9]+ / { out($0) }
		/^# guard: pid [0-9]+ thread [0-9]+: \[</ && !frame[$4 " " $6]++ { out(prog $0) }
		/^dmesg: .*(WARNING:|BUG:|Oops|general protection|Kernel panic|INFO: rcu|stall)/ && !splat++ { out($0) }
		/^@@ .*: the kernel migrated [0-9]+ pages/ { out($0) }
		/^run-vm: (guest killed|the guest was in|WEDGED|the outer QEMU aborted|[1-9][0-9]* (idle poke|lost wake))/ { out($0) }
		END { if (!n) out("no failure line; its last line: " last) }' last="$last" "$f"
	done
done
# The outer emulator's lost interrupts, over every test VM of the run
# (run-vm.sh's last lines; sysfs-docs/testing.rst, "Wake-ups").
for arg in "$@"; do
	cat "${arg#*=}"/*.txt
done |
awk '/^run-vm: [0-9]+ slow wake-up/ { slow += $2 }
     /^run-vm: [0-9]+ lost wake-up/ { lost += $2; if (match($0, /, [0-9]+ healed/)) healed += substr($0, RSTART + 2, RLENGTH - 9) }
     /^run-vm: [0-9]+ idle poke/ { idle += $2 }
     /^run-vm: WEDGED: / { retried++ }
     END { printf "outer QEMU: %d slow wake-up(s), %d lost (%d healed by a key press), %d idle poke(s), %d test VM(s) booted again after a stall or timeout\n",
		   slow, lost, healed, idle, retried }'
for arg in "$@"; do
	cat "${arg#*=}"/*.txt
done |
awk -v extra="${EXTRA_FAILED:-0}" '/^([a-z-]+: )?[0-9]+ passed, [0-9]+ failed/ {
	sub(/^[a-z-]+: /, ""); p += $1; f += $3; s += $5 }
	END {
		# EXTRA_FAILED: streams that stopped, or whose test VM layer failed.
		if (extra) {
			printf "check: %d stream(s) stopped or had a test VM layer fail (one failure each)\n", extra
			f += extra
		}
		printf "%d passed, %d failed, %d skipped\n", p, f, s; exit (f != 0) }'
