#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The summary of "make check": the last line of each layer's output
# (<results>/<layer>.txt), labelled once with the base and the layer's
# name, then the sum of their "N passed, N failed[, N skipped]" lines.
# Exits non-zero if any layer failed.
#
# Usage: check-summary.sh <base>=<results dir>...

set -eo pipefail
[ $# -ge 1 ] || { echo "usage: $0 <base>=<results dir>..." >&2; exit 2; }

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
for arg in "$@"; do
	cat "${arg#*=}"/*.txt
done |
awk '/^([a-z-]+: )?[0-9]+ passed, [0-9]+ failed/ {
	sub(/^[a-z-]+: /, ""); p += $1; f += $3; s += $5 }
	END { printf "%d passed, %d failed, %d skipped\n", p, f, s; exit (f != 0) }'
