#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run every semantic patch of cocci/ in report mode over the patched KVM
# tree and over its fixtures, and fail on anything unexpected:
#  - any report on the tree;
#  - on a fixture (cocci/tests/<rule>/{bad,clean}/<file or directory>),
#    reported lines that differ from the lines ending in an
#    expect-warning comment (a bad fixture has some, a clean one none);
#  - in patch mode (cocci/tests/<rule>/patch/<name>.c), output that
#    differs from <name>.res;
#  - anything spatch prints on stderr (parse errors of the rule, Python
#    exceptions).
# Prints PASS:/FAIL: lines and ends with "cocci: N passed, N failed".
#
# Usage: [COCCI_ARCH=arm64] run-cocci.sh <tree> [file...]
#   <tree>: the patched tree (build/kvm; for arm64, build/arm64/linux);
#   its arch/<arch>/kvm, virt/kvm and prefetch headers are checked, and
#   the files given (absolute paths, e.g. policy modules built outside
#   the tree) with them.  COCCI_ARCH: x86 (the default) or arm64.

set -u
TREE=$(cd "$1" && pwd) || exit 2
shift
COCCI=$(cd "$(dirname "$0")" && pwd)
SPATCH=${SPATCH:-spatch}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0

ok() { echo "PASS: $*"; pass=$((pass + 1)); }
nok() { echo "FAIL: $*"; fail=$((fail + 1)); }

# The options a rule asks for on its "// Options:" line.
options() { sed -n 's|^// Options: *||p' "$1"; }

# Run rule $1 in mode $2 over the files listed in $3 (one per line), each
# its own file group, from the current directory; stdout to $4, stderr
# to $4.err.  Extra arguments go to spatch.
run_spatch() {
	local rule=$1 mode=$2 list=$3 out=$4
	shift 4
	sed 's/$/\n/' "$list" > "$list.groups"
	# shellcheck disable=SC2046
	"$SPATCH" --very-quiet -D "$mode" $(options "$rule") "$@" \
		--sp-file "$rule" --file-groups "$list.groups" \
		> "$out" 2> "$out.err"
	finish_spatch $? "$out"
}

finish_spatch() {
	local rc=$1 out=$2
	if [ "$rc" -ne 0 ] && ! [ -s "$out.err" ]; then
		echo "spatch exited with status $rc" > "$out.err"
	fi
}

# "file:line" of each report, sorted.
reported() { sed -n 's/^\([^:]*\):\([0-9]*\):[0-9]*-[0-9]*: .*/\1:\2/p' "$1" | sort -u; }

# Everything spatch said that is not a "file:line:col-col: WARNING" line.
stray() {
	grep -v '^[^:]*:[0-9]*:[0-9]*-[0-9]*: WARNING: ' "$1" | cat - "$1.err"
}

# ---- the tree ---------------------------------------------------------
# Our headers, at the paths scripts/layout.sh gives them in the tree.
ARCH=${COCCI_ARCH:-x86}
case $ARCH in x86|arm64) ;; *) echo "run-cocci.sh: COCCI_ARCH=$ARCH: x86 or arm64" >&2; exit 2 ;; esac
OUR_HEADERS=$(cd "$COCCI/.." && KP_ARCH=$ARCH scripts/layout.sh kvm-sources |
	awk '$2 ~ /^include\// { print $2 }') || exit 2
cd "$TREE" || exit 2
{ find arch/$ARCH/kvm virt/kvm -name '*.[ch]' ! -name '*.mod.c'
  # shellcheck disable=SC2086
  ls $OUR_HEADERS include/linux/kvm_host.h arch/$ARCH/include/asm/kvm_host.h
} | sed "s|^|$TREE/|" > "$TMP/tree.list.own"
{ cat "$TMP/tree.list.own"; [ $# -eq 0 ] || printf '%s\n' "$@"; } |
	LC_ALL=C sort > "$TMP/tree.list"
# spatch runs outside the tree, on absolute paths: a whole kernel tree
# (arm64's) has a .cocciconfig asking for --use-gitgrep, which needs a
# git repository there.
cd "$TMP" || exit 2
TREE_INC="-I $TREE/include -I $TREE/arch/$ARCH/include -I $TREE/include/uapi
	-I $TREE/arch/$ARCH/include/uapi"
ntree=$(wc -l < "$TMP/tree.list")
TREE_LABEL=tree
[ "$ARCH" = x86 ] || TREE_LABEL="$ARCH tree"

# The rules run in parallel, one per CPU (spatch is single-threaded).
for rule in "$COCCI"/*.cocci; do
	name=$(basename "$rule" .cocci)
	while [ "$(jobs -rp | wc -l)" -ge "${COCCI_JOBS:-$(nproc)}" ]; do
		wait -n
	done
	(
		start=$(date +%s.%N)
		# (arm64's KVM is built in: see prefetch_ops.cocci)
		builtin=
		[ "$ARCH" = x86 ] || ! grep -q '^virtual builtin$' "$rule" ||
			builtin="-D builtin"
		# shellcheck disable=SC2086
		run_spatch "$rule" report "$TMP/tree.list" "$TMP/$name.tree" $TREE_INC $builtin
		echo "$(date +%s.%N) - $start" | bc > "$TMP/$name.secs"
	) &
done
wait
for rule in "$COCCI"/*.cocci; do
	name=$(basename "$rule" .cocci)
	if [ -s "$TMP/$name.tree" ] || [ -s "$TMP/$name.tree.err" ]; then
		nok "cocci $name: $TREE_LABEL ($ntree files)"
		sed 's/^/  /' "$TMP/$name.tree" "$TMP/$name.tree.err"
	else
		ok "cocci $name: $TREE_LABEL ($ntree files, $(printf '%.1f' "$(cat "$TMP/$name.secs")") s)"
	fi
done

# ---- the fixtures -----------------------------------------------------
# Fixtures include our real headers (include/ of the repository) and, for
# what Debian's source declares, the stand-ins in cocci/tests/include.
cd "$COCCI/.." || exit 2
FIXTURE_INC="-I include -I cocci/tests/include"
for rule in cocci/*.cocci; do
	name=$(basename "$rule" .cocci)
	for fixture in cocci/tests/"$name"/bad/* cocci/tests/"$name"/clean/*; do
		[ -e "$fixture" ] || continue
		kind=$(basename "$(dirname "$fixture")")
		label="cocci $name: $kind/$(basename "$fixture")"
		find "$fixture" -name '*.c' | LC_ALL=C sort > "$TMP/fx.list"
		# shellcheck disable=SC2046
		grep -nF '/* expect-warning */' $(cat "$TMP/fx.list") /dev/null |
			cut -d: -f1,2 | sort -u > "$TMP/fx.expected"
		# shellcheck disable=SC2086
		run_spatch "$rule" report "$TMP/fx.list" "$TMP/fx.out" $FIXTURE_INC
		reported "$TMP/fx.out" > "$TMP/fx.got"
		if [ -s "$TMP/fx.out.err" ] || stray "$TMP/fx.out" | grep -q .; then
			nok "$label: unexpected output"
			stray "$TMP/fx.out" | sed 's/^/  /'
		elif [ "$kind" = bad ] && ! [ -s "$TMP/fx.expected" ]; then
			nok "$label: a bad fixture without expect-warning lines"
		elif [ "$kind" = clean ] && [ -s "$TMP/fx.expected" ]; then
			nok "$label: a clean fixture with expect-warning lines"
		elif ! cmp -s "$TMP/fx.expected" "$TMP/fx.got"; then
			nok "$label: reports differ from expect-warning lines"
			comm -23 "$TMP/fx.expected" "$TMP/fx.got" | sed 's/^/  missing: /'
			comm -13 "$TMP/fx.expected" "$TMP/fx.got" |
				while read -r at; do
					grep -F "$at:" "$TMP/fx.out" | sed 's/^/  unexpected: /'
				done
		else
			ok "$label ($(wc -l < "$TMP/fx.got") reports)"
		fi
	done
	for fixture in cocci/tests/"$name"/patch/*.c; do
		[ -e "$fixture" ] || continue
		label="cocci $name: patch/$(basename "$fixture")"
		rm -f "$TMP/fx.c"
		# shellcheck disable=SC2046,SC2086
		"$SPATCH" --very-quiet -D patch $(options "$rule") $FIXTURE_INC \
			--sp-file "$rule" -o "$TMP/fx.c" "$fixture" \
			> "$TMP/fx.out" 2> "$TMP/fx.out.err"
		finish_spatch $? "$TMP/fx.out"
		if [ -s "$TMP/fx.out.err" ]; then
			nok "$label: unexpected output"
			sed 's/^/  /' "$TMP/fx.out.err"
		elif ! [ -e "$TMP/fx.c" ] ||
		     ! diff -u "${fixture%.c}.res" "$TMP/fx.c" > "$TMP/fx.diff"; then
			nok "$label: result differs from $(basename "${fixture%.c}").res"
			sed 's/^/  /' "$TMP/fx.diff" 2>/dev/null
		else
			ok "$label"
		fi
	done
done

echo "cocci: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
