#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Our change as a mail-ready "git format-patch" series against Debian's
# pristine source of the base KP_BASE (scripts/layout.sh).  Backports of
# upstream commits come first, then the new files (nothing builds them
# yet), then the rest of the hook patches of arch/x86/<base>/series,
# whose last one builds the framework, so every step of the series
# builds (make patches-bisect checks it).  Each new
# file goes where scripts/layout.sh says it lives in the tree (a base's
# own files, from arch/x86/<base>/, after the common ones); the commit
# messages are in scripts/patches/*.msg, the cover letter's subject in
# scripts/patches/cover.subject and its text in
# sysfs-docs/cover-letter.txt.
#
# Usage, from the top of the repository:
#   make-patches.sh <pristine tree> <work dir> <output dir> <Debian version>
# The work dir becomes a git repository of the pristine tree with one
# commit per step; the output dir gets the series.

set -eo pipefail
# shellcheck source=scripts/args.sh
. "$(dirname "$0")/args.sh"
kp_args "<pristine tree> <work dir> <output dir> <version>" \
	PRISTINE PG OUT VERSION -- "$@"
TOP=$PWD
MSGS=$TOP/scripts/patches
# shellcheck source=scripts/layout.sh
. "$TOP/scripts/layout.sh"

git_id() {
	git -C "$PG" -c user.name="kvm-prefetch dev" \
		-c user.email=dev@kvm-prefetch.invalid "$@"
}

# commit_files <message> <file>...: add the files at their tree paths and
# commit them with scripts/patches/<message>.msg.
commit_files() {
	local msg=$MSGS/$1.msg f dst
	shift
	for f in "$@"; do
		dst=$PG/$(kp_tree_path "$f")
		mkdir -p "$(dirname "$dst")"
		cp "$f" "$dst"
	done
	git -C "$PG" add -A
	git_id commit -q -F "$msg"
}

rm -rf "$PG" "$OUT"
mkdir -p "$PG" "$OUT"
cp -a "$PRISTINE/." "$PG/"
git -C "$PG" init -q
git -C "$PG" add -A
git_id commit -qm "Debian linux-source-$KP_BASE $VERSION"

# The base's own files in arch/x86/<base>/<dir>/ named <pattern>.
base_files() {
	find "$KP_BASE_DIR/$1" -maxdepth 1 \( -type f -o -type l \) -name "$2" 2>/dev/null |
		LC_ALL=C sort
}

# Backports of upstream commits (a changelog that starts with "commit
# <sha> upstream.") come first, before anything of ours; in the hook
# series too, so that the mail series applies them in the same order.
is_backport() {
	sed -n '/^$/,/^---$/p' "$1" | grep -qE '^commit [0-9a-f]{12,40} upstream\.$'
}
# A hook patch the new files need before them says so in the series
# ("# before the new files" after its name; 7.3's list of the exports
# that other modules may use, which its build checks): it comes with the
# backports.
before_files() {
	grep -qE "^${1#"$KP_BASE_DIR"/}[[:space:]]+# before the new files" \
		"$KP_BASE_DIR/series"
}
series=$(kp_series)
ours=
backports=0
prep=0
for p in $series; do
	if is_backport "$TOP/$p"; then
		backports=$((backports + 1))
	elif before_files "$p"; then
		prep=$((prep + 1))
	fi
	if is_backport "$TOP/$p" || before_files "$p"; then
		[ -z "$ours" ] || {
			echo "make-patches: $p must come before $ours in the series" >&2
			exit 1
		}
		git_id am -q "$TOP/$p"
	else
		ours="$ours $p"
	fi
done

commit_files 10-headers include/linux/kvm_prefetch.h \
	include/uapi/linux/kvm_prefetch.h
commit_files 20-core kvm-policy/*.[ch] include/kvm/prefetch.h
commit_files 30-engine arch/x86/kvm/mmu/*.[ch]
# The base's own files, if it has any, with 40-base-<base>.msg.
base=$(base_files kvm-policy '*.[ch]'; base_files kvm/mmu '*.[ch]')
# shellcheck disable=SC2086
[ -z "$base" ] || commit_files "40-base-$KP_BASE" $base
for p in $ours; do
	git_id am -q "$TOP/$p"
done
commit_files 50-adaptive kvm-policy/adaptive/*
# sysfs-docs/ also holds the project's own documents (its tests, its
# benchmarks, VMMs without the ioctl, the next base's reconnaissance): not
# kernel documentation.
docs=
for f in sysfs-docs/*.rst; do
	case ${f#sysfs-docs/} in
	testing.rst | benchmark.rst | vmm-guide.rst | base-7.3.rst) ;;
	*) docs="$docs $f" ;;
	esac
done
# shellcheck disable=SC2086
commit_files 60-docs sysfs-docs/ABI/* $docs

git_id format-patch -q --no-signature -o "$OUT" --cover-letter \
	HEAD~$(($(git -C "$PG" rev-list --count HEAD) - 1))
subject=$(sed -e 's/[\/&]/\\&/g' "$MSGS/cover.subject")
# The cover letter's numbers are the results the repository holds.
"$TOP/scripts/cover-numbers.sh" "$KP_BASE" > "$PG.numbers"
# What comes before the new files, in the cover letter's words.
case $backports/$prep in
0/0)	first="There is no backport." ;;
1/0)	first="Patch 1 is a backport of an upstream commit (its changelog names it)." ;;
*/0)	first="Patches 1-$backports are backports of upstream commits (their changelogs name them)." ;;
0/1)	first="Patch 1 lists the exports the new files add, which the build checks." ;;
*)	first="The first $((backports + prep)) patches are backports of upstream commits and what the new files need first." ;;
esac
sed -e "/@@NUMBERS@@/{r $PG.numbers" -e 'd}' \
	-e "s/@@BASE@@/$KP_BASE $VERSION/" -e "s/@@FIRST@@/$first/" \
	sysfs-docs/cover-letter.txt > "$PG.blurb"
sed -i -e "s/\*\*\* SUBJECT HERE \*\*\*/$subject/" \
	-e "/\*\*\* BLURB HERE \*\*\*/{r $PG.blurb" -e 'd}' \
	"$OUT/0000-cover-letter.patch"
ls "$OUT"
