#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the x86 vm-test layer N times on one outer-emulator configuration
# and count what went wrong, for the table in sysfs-docs/testing.rst
# ("The outer emulator").  A configuration is OUTER/TCG/VCPUS, e.g.
# current/multi/2 or 7.2/single/2.  Each boot is a plain run-vm.sh run
# (no retry), with the same watchdog on every configuration: a wake-up
# still pending after KP_LOST_AFTER (60) s is lost and fails the boot
# (KP_LOST_FAILS=1, the default here; make check heals it),
# one taken later than a second is slow, counted with its duration
# (KP_HEAL=1 heals instead).  One line
# per boot, then one summary line:
#
#   campaign CONF: B boots, W lost wake-ups, L slow wake-ups, X wedges, A aborts,
#   F failed boots (T failed tests), median S s
#
# Usage: outer-campaign.sh CONF N KERNEL INITRD OUTDIR [run-vm.sh args]

set -uo pipefail
conf=${1:?usage: outer-campaign.sh CONF N KERNEL INITRD OUTDIR}
n=$2 kernel=$3 initrd=$4 out=$5
shift 5
IFS=/ read -r outer tcg smp <<< "$conf"
here=$(dirname "$0")
mkdir -p "$out"
heal=${KP_HEAL:-0}
for ((i = 1; i <= n; i++)); do
	log=$out/boot$i.log
	KP_OUTER=$outer KP_TCG=$tcg KP_SMP=$smp KP_HEAL=$heal \
		KP_LOST_FAILS=${KP_LOST_FAILS:-1} \
		"$here"/run-vm.sh --kernel "$kernel" --initrd "$initrd" \
		--mode test --log "$log" "$@" > "$out/boot$i.out" 2>&1
	rc=$?
	awk -v i="$i" -v rc="$rc" '
		# The log: the watchdog lines; the output: run-vm.sh verdicts.
		FNR == NR && /^run-vm: lost wake-up: still pending/ { lost++ }
		FNR == NR && /^run-vm: slow wake-up: / {
			slow++
			if ($5 + 0 > maxpend) maxpend = $5 + 0
		}
		FNR == NR && /^run-vm: [0-9]+ lost wake-up\(s\)/ { healed = $2 }
		FNR == NR { next }
		/^run-vm: guest killed: (no console output|timeout)/ { wedge++ }
		/^run-vm: the outer QEMU aborted/ { abort++ }
		/^vm: [0-9]+ s in QEMU/ { secs = $2 }
		/^[0-9]+ passed, [0-9]+ failed/ { pass = $1; fail = $3 }
		END {
			printf "boot %d: rc %d, %d passed, %d failed, %d lost wake-ups, %d wedged, %d aborted, %d s, %d slow wake-ups, longest %d s\n",
				i, rc, pass, fail, lost + healed, wedge, abort, secs, slow, maxpend
		}' "$log" "$out/boot$i.out" | tee -a "$out/boots.txt"
done
awk -v conf="$conf" '
	/^boot / {
		b++
		if ($4 + 0 != 0) fb++
		tf += $7; w += $9; x += $12; a += $14; s[b] = $16; sl += $18
		if ($22 + 0 > mp) mp = $22 + 0
	}
	END {
		# median of the times (insertion sort, b is small)
		for (i = 2; i <= b; i++)
			for (j = i; j > 1 && s[j - 1] + 0 > s[j] + 0; j--) {
				t = s[j]; s[j] = s[j - 1]; s[j - 1] = t
			}
		med = b % 2 ? s[(b + 1) / 2] : (s[b / 2] + s[b / 2 + 1]) / 2
		printf "campaign %s: %d boots, %d lost wake-ups, %d slow wake-ups (longest %d s), %d wedges, %d aborts, %d failed boots (%d failed tests), median %d s\n",
			conf, b, w, sl, mp, x, a, fb, tf, med
	}' "$out/boots.txt" | tee "$out/summary.txt"
