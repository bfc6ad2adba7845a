#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every prefix of the "make patches" series builds: check out each commit
# of the series' git repository (scripts/make-patches.sh) in turn into
# one tree and build KVM's modules from it as "make modules" does
# (arch/x86/Kbuild.oot against the linux-headers package).  Files are
# synced by content, so each step recompiles only what its patch touched
# and what depends on it.  A step passes when the build succeeds with no
# compiler warning.  The build leaves out debug info and so module BTF
# (CONFIG_DEBUG_INFO= CONFIG_DEBUG_INFO_BTF_MODULES= on the command line),
# which only make it slower: what is checked is that each step compiles,
# links and passes modpost.  CONFIG_KVM_GENERIC_PREFETCH, which
# Kbuild.oot sets as Kconfig would, is set only from the step whose
# virt/kvm/Kconfig defines it.  Prints a PASS/FAIL line per step and ends with
# "patches-bisect: N passed, N failed".
#
# IN_ROOT (environment, the Makefile's): the command that kbuild runs
# under, "scripts/in-root.sh <root>" for a base built in a build root
# (7.3), where <headers dir> is a path inside that root; empty (6.1,
# 6.12): kbuild runs on the host.  The work dir must be seen in the root
# (under the repository's top directory).
#
# Usage: patches-bisect.sh <series git dir> <work dir> <headers dir> <Kbuild.oot>

set -uo pipefail
# shellcheck source=scripts/args.sh
. "$(dirname "$0")/args.sh"
kp_args "<series git dir> <work dir> <headers dir> <Kbuild.oot>" \
	PG WORK KHEADERS OOT -- "$@"
TOP=$PWD
# IN_ROOT is a command and its arguments, split at blanks.
read -r -a in_root <<< "${IN_ROOT:-}"
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
TREE=$WORK/tree
STAGE=$WORK/stage
pass=0
fail=0

mkdir -p "$TREE"
base=$(git -C "$PG" rev-list --max-parents=0 HEAD) || exit 1
n=0
for c in $(git -C "$PG" rev-list --reverse "$base..HEAD"); do
	n=$((n + 1))
	subject=$(git -C "$PG" log -1 --format=%s "$c")
	rm -rf "$STAGE"
	mkdir -p "$STAGE"
	git -C "$PG" archive "$c" | tar -x -C "$STAGE"
	"$TOP/scripts/write-kbuild.sh" "$OOT" "$STAGE/arch/x86/kvm/Makefile" \
		> "$STAGE/arch/x86/kvm/Kbuild"
	grep -q '^config KVM_GENERIC_PREFETCH' "$STAGE/virt/kvm/Kconfig" ||
		sed -i '/KVM_GENERIC_PREFETCH/d' "$STAGE/arch/x86/kvm/Kbuild"
	rsync -rc "$STAGE/" "$TREE/"
	log=$WORK/step-$n.log
	t0=$(date +%s)
	"${in_root[@]}" make -C "$KHEADERS" M="$TREE/arch/x86/kvm" -j"$(nproc)" \
		CONFIG_DEBUG_INFO= CONFIG_DEBUG_INFO_BTF_MODULES= modules > "$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - t0))
	warnings=$(grep -c 'warning:' "$log")
	if [ $rc -eq 0 ] && [ "$warnings" -eq 0 ]; then
		echo "PASS: patches-bisect $n/$subject builds (${secs} s)"
		pass=$((pass + 1))
	else
		echo "FAIL: patches-bisect $n/$subject: build status $rc, $warnings warning(s) (${secs} s)"
		grep -E 'error:|warning:' "$log" | head -n 8 | sed 's/^/  /'
		fail=$((fail + 1))
	fi
done
if [ $n -eq 0 ]; then
	echo "FAIL: patches-bisect: no commits in $PG"
	fail=$((fail + 1))
fi
echo "patches-bisect: $pass passed, $fail failed"
[ $fail -eq 0 ]
