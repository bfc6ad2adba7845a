#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Where this repository's files live in the kernel tree, written once.
# The overlay of "make modules", "make patches" and the static checks
# all take their paths from here:
#
#	kvm-policy/		virt/kvm/
#	include/		include/
#	arch/<arch>/kvm/	arch/<arch>/kvm/
#	sysfs-docs/ABI/		Documentation/ABI/testing/
#	sysfs-docs/*.rst	Documentation/virt/kvm/
#
# Each architecture (KP_ARCH: x86, the default, or arm64) and base kernel
# (KP_BASE: 6.1, the default, or 6.12) has its own directory
# arch/<arch>/<base>/: its hook series (series, patches/) and the few
# files only that base needs, laid out as above below it:
#
#	arch/<arch>/<base>/kvm-policy/	virt/kvm/
#	arch/<arch>/<base>/kvm/		arch/<arch>/kvm/
#
# Only the selected architecture's files have a home in the tree.
#
# Usage, from the top of the repository:
#   layout.sh path <file>...	the tree path of each file
#   layout.sh kvm-sources	kvm.ko's own sources for KP_BASE:
#				"<file> <tree path>" per line (what the
#				overlay copies)
#   layout.sh policy-sources	the sources of the policy modules in
#				kvm-policy/*/, built outside the tree (not
#				the BPF policies, kvm-policy/bpf/*.bpf.c)
#   layout.sh overlay <tree>	copy kvm.ko's sources into <tree>
#   layout.sh series		the hook patches of arch/<arch>/<base>/series,
#				in order
# Sourced, it defines the kp_* functions below.

KP_ARCH=${KP_ARCH:-x86}
KP_BASE=${KP_BASE:-6.1}
KP_BASE_DIR=arch/$KP_ARCH/$KP_BASE

# kp_tree_path <file>: print where <file> lives in the kernel tree; fail
# for a file that has no home there.  A file of another base's directory
# has none.
kp_tree_path() {
	case $1 in
	"$KP_BASE_DIR"/kvm-policy/*)
		echo "virt/kvm/${1#"$KP_BASE_DIR"/kvm-policy/}" ;;
	"$KP_BASE_DIR"/kvm/*)
		echo "arch/$KP_ARCH/kvm/${1#"$KP_BASE_DIR"/kvm/}" ;;
	kvm-policy/*)		echo "virt/kvm/${1#kvm-policy/}" ;;
	include/*)		echo "$1" ;;
	arch/"$KP_ARCH"/kvm/*)	echo "$1" ;;
	sysfs-docs/ABI/*)	echo "Documentation/ABI/testing/${1#sysfs-docs/ABI/}" ;;
	sysfs-docs/*.rst)	echo "Documentation/virt/kvm/${1#sysfs-docs/}" ;;
	*)			return 1 ;;
	esac
}

# C sources and headers under the given directories, sorted.
kp_c_files() {
	find "$@" \( -type f -o -type l \) \( -name '*.c' -o -name '*.h' \) 2>/dev/null |
		LC_ALL=C sort
}

# kvm.ko's own sources with their tree paths.  Policy modules (the
# subdirectories of kvm-policy/) are built outside the tree.
kp_kvm_sources() {
	local f dst
	for f in $(kp_c_files kvm-policy include "arch/$KP_ARCH/kvm" "$KP_BASE_DIR"); do
		case $f in kvm-policy/*/*) continue ;; esac
		dst=$(kp_tree_path "$f") || continue
		echo "$f $dst"
	done
}

kp_policy_sources() {
	kp_c_files kvm-policy/*/ | grep -v '\.bpf\.[ch]$'
}

# kp_overlay <tree>: copy kvm.ko's sources into <tree>.
kp_overlay() {
	local f dst
	kp_kvm_sources | while read -r f dst; do
		mkdir -p "$1/$(dirname "$dst")"
		cp "$f" "$1/$dst"
	done
}

# The hook patches, in the order of arch/<arch>/<base>/series (comments and
# blank lines dropped), relative to the top of the repository.
kp_series() {
	[ -f "$KP_BASE_DIR/series" ] || {
		echo "layout.sh: no base $KP_BASE ($KP_BASE_DIR/series)" >&2
		return 1
	}
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' -e "s|^|$KP_BASE_DIR/|" \
		"$KP_BASE_DIR/series"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -eo pipefail
	cmd=${1:-}
	shift || true
	case $cmd in
	path)
		for f in "$@"; do
			kp_tree_path "$f" || {
				echo "layout.sh: $f has no home in the tree" >&2
				exit 1
			}
		done ;;
	kvm-sources)	kp_kvm_sources ;;
	policy-sources)	kp_policy_sources ;;
	overlay)	kp_overlay "$1" ;;
	series)		kp_series ;;
	*)
		sed -n '/^# Usage/,/^# Sourced/s/^# \{0,1\}//p' "$0" >&2
		exit 2 ;;
	esac
fi
