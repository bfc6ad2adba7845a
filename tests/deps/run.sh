#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel set "make kernel-deps" installs (scripts/kernel-set.sh),
# tested against archives that no machine has on demand: fake dpkg-query,
# apt-cache, apt-get and id on PATH (tests/deps/fake/) answer from a
# state directory per case, and each case runs the real Makefile:
#   make kernel-deps check-versions KERNEL=<base>
# then checks what it installed, what it asked apt for and what it said.
#
# Usage, from the top of the repository: tests/deps/run.sh <work dir>
# The last line is "deps-test: N passed, N failed".

set -o pipefail
[ $# -eq 1 ] || { echo "usage: $0 <work dir>" >&2; exit 2; }
WORK=$1
TOP=$PWD
FAKE=$TOP/tests/deps/fake
passed=0
failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

# Versions as Debian spells them; none is a real one on purpose.
V_OLD=6.12.97-1~deb12u1
V_NEW=6.12.98-1~deb12u1
ABI_OLD=6.12.97+deb12-amd64
ABI_NEW=6.12.98+deb12-amd64
META=linux-image-6.12-amd64

# A case's state: $S/archive and $S/installed, "package|version|depends".
new_case() {
	S=$WORK/$1
	rm -rf "$S"
	mkdir -p "$S"
	: > "$S/installed"
	: > "$S/archive"
	: > "$S/apt-get.log"
}
archive() { echo "$1|$2|$3" >> "$S/archive"; }
installed() { echo "$1|$2|$3" >> "$S/installed"; }
# installed_set <source version>: the old image's set (metapackage,
# image, headers) installed, and linux-source-6.12 of that version.
installed_set() {
	installed "$META" "$V_OLD" "linux-image-$ABI_OLD (= $V_OLD)"
	installed "linux-image-$ABI_OLD" "$V_OLD" ""
	installed "linux-headers-$ABI_OLD" "$V_OLD" ""
	installed linux-source-6.12 "$1" ""
}
version_of() { grep -m1 "^$1|" "$S/installed" | cut -d'|' -f2; }

# run <base> [uid]: the Makefile's kernel-deps and check-versions.
run() {
	FAKE_STATE=$S FAKE_UID=${2:-0} PATH=$FAKE:$PATH \
		make -s --no-print-directory -C "$TOP" kernel-deps check-versions \
		KERNEL="$1" > "$S/out" 2> "$S/err"
	rc=$?
}
# expect <description> <test args...>
expect() {
	local what=$1
	shift
	if "$@"; then
		pass "$CASE: $what"
	else
		fail "$CASE: $what"
		sed 's/^/    /' "$S/out" "$S/err"
	fi
}
logged() { grep -qe "$1" "$S/apt-get.log"; }
said() { grep -qF -e "$1" "$S/err"; }
err_lines() { [ "$(grep -c "^kernel-set:" "$S/err")" = "$1" ]; }

# The archive mid-update, as on 2026-12-02: the source of the next point
# release is out, the image, its headers and the metapackage are not.
skewed_archive() {
	archive "$META" "$V_OLD" "linux-image-$ABI_OLD (= $V_OLD)"
	archive "linux-image-$ABI_OLD" "$V_OLD" ""
	archive "linux-headers-$ABI_OLD" "$V_OLD" ""
	archive linux-source-6.12 "$V_NEW" ""
	archive linux-source-6.12 "$V_OLD" ""
}

CASE="source newer than the image, nothing installed"
new_case skew-fresh
skewed_archive
run 6.12
expect "succeeds" test "$rc" = 0
expect "installs linux-source-6.12=$V_OLD explicitly" logged "install.* linux-source-6.12=$V_OLD"
expect "installs linux-headers-$ABI_OLD=$V_OLD explicitly" logged "install.* linux-headers-$ABI_OLD=$V_OLD"
expect "ends with source, image and headers all $V_OLD" test \
	"$(version_of linux-source-6.12) $(version_of "linux-image-$ABI_OLD") $(version_of "linux-headers-$ABI_OLD")" = \
	"$V_OLD $V_OLD $V_OLD"
expect "check-versions agrees" grep -qx "kernel: ABI $ABI_OLD, Debian version $V_OLD" "$S/out"

CASE="newer source already installed"
new_case skew-installed
skewed_archive
installed_set "$V_NEW"
run 6.12
expect "succeeds" test "$rc" = 0
expect "downgrades linux-source-6.12 to $V_OLD (--allow-downgrades)" \
	logged "install.*--allow-downgrades.* linux-source-6.12=$V_OLD"
expect "leaves linux-source-6.12 at $V_OLD" test "$(version_of linux-source-6.12)" = "$V_OLD"
expect "check-versions agrees" grep -qx "kernel: ABI $ABI_OLD, Debian version $V_OLD" "$S/out"

CASE="consistent set installed"
new_case consistent
skewed_archive
installed_set "$V_OLD"
run 6.12
expect "succeeds" test "$rc" = 0
expect "does not call apt-get" test ! -s "$S/apt-get.log"

CASE="installed metapackage older than the archive's"
new_case meta-installed
archive "$META" "$V_NEW" "linux-image-$ABI_NEW (= $V_NEW)"
archive "linux-image-$ABI_NEW" "$V_NEW" ""
archive "linux-headers-$ABI_NEW" "$V_NEW" ""
archive "linux-headers-$ABI_OLD" "$V_OLD" ""
archive linux-source-6.12 "$V_NEW" ""
archive linux-source-6.12 "$V_OLD" ""
installed "$META" "$V_OLD" "linux-image-$ABI_OLD (= $V_OLD)"
installed "linux-image-$ABI_OLD" "$V_OLD" ""
run 6.12
expect "succeeds" test "$rc" = 0
expect "builds for the installed image: source $V_OLD, headers of $ABI_OLD" test \
	"$(version_of linux-source-6.12) $(version_of "linux-headers-$ABI_OLD")" = "$V_OLD $V_OLD"
expect "does not upgrade the image" test "$(version_of "$META")" = "$V_OLD"

CASE="no source of the image's version in the archive"
new_case no-source
archive "$META" "$V_OLD" "linux-image-$ABI_OLD (= $V_OLD)"
archive "linux-image-$ABI_OLD" "$V_OLD" ""
archive "linux-headers-$ABI_OLD" "$V_OLD" ""
archive linux-source-6.12 "$V_NEW" ""
run 6.12
expect "fails" test "$rc" != 0
expect "installs nothing" test -z "$(grep ' install' "$S/apt-get.log")"
expect "says it in one message" err_lines 1
expect "names the image's version" said "linux-image-$ABI_OLD $V_OLD"
expect "names the source versions the archive has" said "linux-source-6.12 $V_NEW"
expect "gives the command that fixes it" said "apt-get install --allow-downgrades $META linux-headers-$ABI_OLD=$V_OLD linux-source-6.12=$V_OLD"

CASE="headers of the image's version missing"
new_case no-headers
archive "$META" "$V_OLD" "linux-image-$ABI_OLD (= $V_OLD)"
archive "linux-image-$ABI_OLD" "$V_OLD" ""
archive linux-source-6.12 "$V_OLD" ""
run 6.12
expect "fails" test "$rc" != 0
expect "says the headers are missing" said "linux-headers-$ABI_OLD $V_OLD is not in it"

CASE="not root"
new_case not-root
skewed_archive
run 6.12 1000
expect "fails" test "$rc" != 0
expect "does not call apt-get" test ! -s "$S/apt-get.log"
expect "gives the command for root" said "apt-get install --allow-downgrades --no-install-recommends"

CASE="6.1: a newer source than the image"
new_case base-6.1
archive linux-image-amd64 6.1.99-2 "linux-image-6.1.0-99-amd64 (= 6.1.99-2)"
archive linux-image-6.1.0-99-amd64 6.1.99-2 ""
archive linux-headers-6.1.0-99-amd64 6.1.99-2 ""
archive linux-source-6.1 6.1.99-3 ""
archive linux-source-6.1 6.1.99-2 ""
run 6.1
expect "succeeds" test "$rc" = 0
expect "installs linux-source-6.1=6.1.99-2" test "$(version_of linux-source-6.1)" = 6.1.99-2
expect "check-versions agrees" grep -qx "kernel: ABI 6.1.0-99-amd64, Debian version 6.1.99-2" "$S/out"

echo "deps-test: $passed passed, $failed failed"
[ "$failed" = 0 ]
