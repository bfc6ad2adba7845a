#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch.pl (from the extracted kernel source) over the "make patches"
# series (not its cover letter) and, with -f, over our own source files.
# With --strict, as KVM's maintainers run it: a patch or file passes
# with no error, warning or check left after the --ignore list given in
# CHECKPATCH_IGNORE (cocci/cocci.mk says why each type is ignored).
# Prints PASS:/FAIL: lines and ends with "checkpatch: N passed, N failed".
#
# Usage: run-checkpatch.sh <checkpatch.pl> <patch dir> <our files...>

set -u
CHECKPATCH=$1
PATCHES=$2
shift 2
pass=0
fail=0

# checkpatch.pl $@; PASS or FAIL (with its findings) under the name $1.
check() {
	local name=$1 out rc
	shift
	out=$(perl "$CHECKPATCH" --no-tree --strict --show-types --no-summary \
		--ignore "${CHECKPATCH_IGNORE:-}" "$@" 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && ! echo "$out" | grep -qE '^(ERROR|WARNING|CHECK):'; then
		echo "PASS: checkpatch $name"
		pass=$((pass + 1))
	else
		echo "FAIL: checkpatch $name"
		echo "$out" | grep -v '^$' | sed 's/^/  /'
		fail=$((fail + 1))
	fi
}

npatches=0
for p in "$PATCHES"/*.patch; do
	case $p in *cover-letter.patch | "$PATCHES/*.patch") continue ;; esac
	check "$(basename "$p")" "$p"
	npatches=$((npatches + 1))
done
if [ "$npatches" -eq 0 ]; then
	echo "FAIL: checkpatch: no patches in $PATCHES"
	fail=$((fail + 1))
fi
for f in "$@"; do
	check "-f $f" -f "$f"
done

echo "checkpatch: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
