#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-arm64, after arm64-kernel and arm64-policy-modules: boot the
# arm64 Image under QEMU's EL2 with the test programs and the policy
# modules (tests/arm64/run-vm.sh), write the record (tests/arm64/last-run.txt)
# and judge it.  The record ends with the runner's "N passed, N failed,
# N skipped" line.  Exit 0 only if that line is there and says 0 failed
# and the runner exited 0; any FAIL, a kernel log splat (init reports it
# as a FAIL), a hang or panic (no @@DONE), the runner's own timeout or a
# missing summary line is an exit 1.
#
# Usage: arm64-check.sh <Image> <vm outdir> <record> [kernel args]
# Environment: MODULES (the .ko files), UAPI (the uAPI headers),
# CHECK_TIMEOUT (seconds for the whole run, default 1200).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
image=$1 out=$2 record=$3
shift 3
# The record itself does not make the tree count as changed.
rel=$(realpath --relative-to="$here" "$record" 2>/dev/null || echo "$record")
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
start=$(date +%s)
timeout "${CHECK_TIMEOUT:-1200}" "$here/tests/arm64/run-vm.sh" "$image" "$out" "$@" > "$tmp" 2>&1
rc=$?
[ "$rc" = 124 ] && echo "FAIL: check-arm64: the run timed out after ${CHECK_TIMEOUT:-1200} s" >> "$tmp"
summary=$(tail -n 1 "$tmp")
{
	echo "# make check-arm64, $(date -u '+%Y-%m-%d %H:%M UTC'), $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$here" diff --quiet HEAD -- . ":(exclude)$rel" 2>/dev/null || echo '+changes')"
	echo "# kernel: $image ($(stat -c %y "$image" 2>/dev/null | cut -d. -f1))"
	echo "# run: $(( $(date +%s) - start )) s, runner rc=$rc"
	if [[ "$summary" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped)?$ ]]; then
		cat "$tmp"
	else
		cat "$tmp"
		echo "FAIL: check-arm64: no summary line from the runner (rc=$rc)"
		echo "0 passed, 1 failed"
	fi
} > "$record"
cat "$record"
last=$(tail -n 1 "$record")
if [ "$rc" = 0 ] && [[ "$last" =~ ^[0-9]+\ passed,\ 0\ failed ]]; then
	exit 0
fi
echo "check-arm64: FAILED (runner rc=$rc; record: $record)" >&2
exit 1
