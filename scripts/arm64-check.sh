#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-arm64, after arm64-kernel and arm64-policy-modules: the
# static layer (scripts/arm64-static.sh: cocci and checkpatch on the arm64
# tree and series), then boot the arm64 Image under QEMU's EL2 with the
# test programs and the policy modules (tests/arm64/run-vm.sh); write the
# record (make check-arm64: build/arm64/last-run.txt; `make arm64-record`
# copies it into the tracked tests/arm64/last-run.txt) and judge it.
# The record ends with one "N passed, N failed, N skipped" line, the sum
# of both layers.  Exit 0 only if the runner's own summary line is there
# and says 0 failed, the runner exited 0 and the static layer passed; any
# FAIL, a kernel log splat (init reports it as a FAIL), a hang or panic
# (no @@DONE), the runner's own timeout or a missing summary line is an
# exit 1.
#
# Usage: arm64-check.sh <Image> <vm outdir> <record> [kernel args]
# Environment: MODULES (the .ko files), UAPI (the uAPI headers),
# ARM64_OUT (the build, default: the Image's directory), CHECKPATCH_IGNORE,
# CHECK_TIMEOUT (seconds for the VM run, default 1200), ARM64_PLANT (the
# plants the kernel was built with: named in the record's header), the
# VM's KP_OUTER, KP_TCG, KP_SMP (tests/arm64/run-vm.sh), ARM64_TRACKED (the
# base's tracked record, default tests/arm64/last-run.txt).  Kernel args
# kp.tests=a,b (a partial run) are named in the header too.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
image=$1 out=$2 record=$3
shift 3
# The tracked record does not make the tree count as changed.
rel=${ARM64_TRACKED:-tests/arm64/last-run.txt}
mkdir -p "$(dirname "$record")"
tmp=$(mktemp) static=$(mktemp)
trap 'rm -f "$tmp" "$static"' EXIT
start=$(date +%s)
"$here/scripts/arm64-static.sh" "${ARM64_OUT:-$(dirname "$image")}" > "$static" 2>&1
src=$?
# (an exit without a FAIL line of its own still fails the check)
if [ "$src" != 0 ] && ! grep -q '^FAIL:' "$static"; then
	echo "FAIL: check-arm64: the static layer exited $src" >> "$static"
fi
sp=$(grep -c '^PASS:' "$static") sf=$(grep -c '^FAIL:' "$static")
timeout "${CHECK_TIMEOUT:-1200}" "$here/tests/arm64/run-vm.sh" "$image" "$out" "$@" > "$tmp" 2>&1
rc=$?
[ "$rc" = 124 ] && echo "FAIL: check-arm64: the run timed out after ${CHECK_TIMEOUT:-1200} s" >> "$tmp"
summary=$(tail -n 1 "$tmp")
{
	echo "# make check-arm64, $(date -u '+%Y-%m-%d %H:%M UTC'), $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$here" diff --quiet HEAD -- . ":(exclude)$rel" 2>/dev/null || echo '+changes')"
	echo "# kernel: $image ($(stat -c %y "$image" 2>/dev/null | cut -d. -f1))"
	[ -z "${ARM64_PLANT:-}" ] || echo "# plant: $ARM64_PLANT"
	for a in "$@"; do
		case $a in kp.tests=*) echo "# tests: ${a#kp.tests=}" ;; esac
	done
	echo "# run: $(( $(date +%s) - start )) s, runner rc=$rc"
	cat "$static"
	cat "$tmp"
	if [[ "$summary" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped)?$ ]]; then
		vp=${BASH_REMATCH[1]} vf=${BASH_REMATCH[2]} vs=${BASH_REMATCH[4]:-0}
	else
		echo "FAIL: check-arm64: no summary line from the runner (rc=$rc)"
		vp=0 vf=1 vs=0
	fi
	echo "check-arm64: static $sp passed, $sf failed; in the VM $vp passed, $vf failed, $vs skipped"
	echo "$((sp + vp)) passed, $((sf + vf)) failed, $vs skipped"
} > "$record"
cat "$record"
if [ "$rc" = 0 ] && [ "$src" = 0 ] && [ "$sf" = 0 ] && [ "${vf:-1}" = 0 ]; then
	exit 0
fi
echo "check-arm64: FAILED (static rc=$src, runner rc=$rc; record: $record)" >&2
exit 1
