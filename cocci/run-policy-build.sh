#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Policy modules see KVM only through <linux/kvm_prefetch.h> and kvm.ko's
# exports.  Build the fixture policy module of cocci/tests/policy_build
# the way the Makefile builds policy modules (out of tree, against the
# headers package and kvm.ko's Module.symvers), once per case, and check
# that each case ends as it must, with its own diagnostic:
#  - api-only: calls kvm_prefetch_decide() with the policy API only:
#    the compiler stops at its implicit declaration;
#  - internal-header: the same call with <kvm/prefetch.h> included: it
#    compiles, and modpost finds kvm_prefetch_decide undefined (not
#    exported), and nothing else;
#  - good: the policy API only, builds without a warning.
# Prints PASS:/FAIL: lines and ends with "policy-build: N passed, N failed".
#
# IN_ROOT (environment, the Makefile's): the command kbuild runs under
# for a base built in a build root (7.3: "scripts/in-root.sh <root>";
# <kernel headers> is a path in that root); empty: on the host.
#
# Usage: run-policy-build.sh <kernel headers> <patched tree> <work dir>
#   <patched tree>: its include/ and arch/x86/kvm/Module.symvers are used.

set -u
KHEADERS=$1
TREE=$(cd "$2" && pwd) || exit 2
WORK=$3
FIXTURE=$(cd "$(dirname "$0")/tests/policy_build" && pwd) || exit 2
MODULE=kvm-prefetch-build
# IN_ROOT is a command and its arguments, split at blanks.
read -r -a in_root <<< "${IN_ROOT:-}"
pass=0
fail=0

ok() { echo "PASS: policy-build $*"; pass=$((pass + 1)); }
nok() { echo "FAIL: policy-build $*"; fail=$((fail + 1)); }

# Build case $1 from the fixture's $2.c with the defines $3, in a fresh
# directory; the log goes to $WORK/$1.log.  Returns make's status.
build() {
	local dir=$WORK/$1
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$FIXTURE"/* "$dir"/
	# The kernel's Makefile unexports LC_ALL: plain quotes in gcc's
	# messages need the other locale variables.
	LANG=C LC_CTYPE=C LC_MESSAGES=C "${in_root[@]}" make -C "$KHEADERS" M="$dir" \
		KVM_PREFETCH_INCLUDE="$TREE/include" \
		KBUILD_EXTRA_SYMBOLS="$TREE/arch/x86/kvm/Module.symvers" \
		POLICY_BUILD_CASE="$2" POLICY_BUILD_DEFINES="$3" \
		modules > "$WORK/$1.log" 2>&1
}

# FAIL case $1 with the reason $2 and the log's diagnostics.
nok_log() {
	nok "$1: $2"
	grep -E 'error|warning|ERROR|WARNING|undefined' "$WORK/$1.log" |
		head -20 | sed 's/^/  /'
}

mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
if ! [ -s "$TREE/arch/x86/kvm/Module.symvers" ]; then
	nok "no $TREE/arch/x86/kvm/Module.symvers (run make modules)"
	echo "policy-build: $pass passed, $fail failed"
	exit 1
fi

undeclared="error: implicit declaration of function 'kvm_prefetch_decide'"
# modpost says "..." [<path>.ko] undefined! on 6.1 and 6.12, and
# <name>.ko: symbol '...' undefined! on 7.3.
undefined="ERROR: modpost: \"kvm_prefetch_decide\" \[$WORK/internal-header/$MODULE.ko\] undefined!"
undefined_new="ERROR: modpost: $MODULE.ko: symbol 'kvm_prefetch_decide' undefined!"

if build api-only internal ""; then
	nok_log api-only "built, but kvm_prefetch_decide() must be undeclared"
elif ! grep -qF "$undeclared" "$WORK/api-only.log"; then
	nok_log api-only "failed, but not at the implicit declaration"
else
	ok "api-only: kvm_prefetch_decide() is not declared"
fi

if build internal-header internal -DPOLICY_BUILD_INTERNAL_HEADER; then
	nok_log internal-header "built, but kvm_prefetch_decide must not be exported"
elif ! [ -e "$WORK/internal-header/internal.o" ]; then
	nok_log internal-header "did not compile"
elif ! grep -qx -e "$undefined" -e "$undefined_new" "$WORK/internal-header.log" ||
     [ "$(grep -c 'undefined!' "$WORK/internal-header.log")" -ne 1 ]; then
	nok_log internal-header "modpost did not fail on kvm_prefetch_decide alone"
else
	ok "internal-header: kvm_prefetch_decide is not exported"
fi

if ! build good good ""; then
	nok_log good "did not build"
elif ! [ -e "$WORK/good/$MODULE.ko" ] ||
     grep -qiE 'warning|error' "$WORK/good.log"; then
	nok_log good "built with warnings or without the module"
else
	ok "good: builds and links with <linux/kvm_prefetch.h> only"
fi

echo "policy-build: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
