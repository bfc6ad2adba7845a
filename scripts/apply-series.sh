#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Apply the hook patches of arch/x86/<base>/series (KP_BASE, see
# scripts/layout.sh), in order, to an extracted tree.  When one does not apply, print patch(1)'s output, then the patch
# and each file and hunk that failed, and exit non-zero.
#
# Usage, from the top of the repository: apply-series.sh <tree>

set -eo pipefail
[ $# -eq 1 ] || { echo "usage: $0 <tree>" >&2; exit 2; }
# shellcheck source=scripts/layout.sh
. "$(dirname "$0")/layout.sh"

series=$(kp_series)
for p in $series; do
	if ! out=$(patch -p1 -d "$1" --forward --batch \
			--no-backup-if-mismatch -r - < "$p" 2>&1); then
		echo "$out" >&2
		echo "ERROR: patch $p does not apply:" >&2
		echo "$out" | awk '/^patching file / { f = $3 }
			/FAILED|can.t find file|malformed/ { print "  file: " f ": " $0 }' >&2
		exit 1
	fi
done
