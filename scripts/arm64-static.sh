#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-arm64's static layer, after arm64-kernel:
#  - cocci/*.cocci in report mode over the arm64 tree the kernel is built
#    from (arch/arm64/kvm, virt/kvm, our headers) and the policy modules,
#    as make check runs them over x86's (cocci/run-cocci.sh,
#    COCCI_ARCH=arm64); prefetch_s2.cocci holds the arm64 hooks' rules;
#  - checkpatch.pl --strict over arm64's hook series, as git would mail
#    it: the series is committed with "git am" onto the pristine files it
#    touches and taken out again with "git format-patch" (the patch files
#    of arch/arm64/<base>/patches are plain unified diffs, some without
#    "diff --git" lines, which checkpatch misreads), and over our arm64
#    files with -f.
# Prints both scripts' PASS:/FAIL: lines and their summary lines; exits 1
# if either failed.
#
# Usage: arm64-static.sh <out>   ($(ARM64_OUT): pristine/, linux/)
# Environment: CHECKPATCH_IGNORE (cocci/cocci.mk), KP_BASE (6.1).

set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(cd "$1" && pwd) || exit 2
export KP_ARCH=arm64 KP_BASE=${KP_BASE:-6.1}
rc=0

# shellcheck disable=SC2046
COCCI_ARCH=arm64 "$here/cocci/run-cocci.sh" "$out/linux" \
	$(cd "$here" && scripts/layout.sh policy-sources | sed "s|^|$here/|") || rc=1

git_dir=$out/series-git
rm -rf "$git_dir" "$out/patches"
mkdir -p "$git_dir"
series=$(cd "$here" && scripts/layout.sh series | sed "s|^|$here/|")
# shellcheck disable=SC2086
for f in $(sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' $series | sort -u); do
	[ -e "$out/pristine/$f" ] || continue
	mkdir -p "$git_dir/$(dirname "$f")"
	cp "$out/pristine/$f" "$git_dir/$f"
done
g() { git -C "$git_dir" -c user.name="kvm-prefetch dev" \
	-c user.email=dev@kvm-prefetch.invalid "$@"; }
{
	g init -q . && g add -A && g commit -q -m "pristine $KP_BASE" &&
	for p in $series; do g am -q "$p" || exit 1; done &&
	g format-patch -q -o "$out/patches" HEAD~"$(echo "$series" | wc -w)"
} > "$out/series-git.log" 2>&1
if [ $? -ne 0 ]; then
	echo "FAIL: checkpatch: the arm64 series does not apply with git am"
	sed 's/^/  /' "$out/series-git.log"
	echo "checkpatch: 0 passed, 1 failed"
	exit 1
fi
files=$(cd "$here" && find arch/arm64 -type f \( -name '*.c' -o -name '*.h' \) |
	LC_ALL=C sort)
# shellcheck disable=SC2086
(cd "$here" && cocci/run-checkpatch.sh "$out/pristine/scripts/checkpatch.pl" \
	"$out/patches" $files) || rc=1
exit $rc
