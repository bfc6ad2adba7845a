#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install one consistent kernel set for a base: the image its metapackage
# boots, that image's headers and linux-source-<base>, all three of the
# image's Debian version.
#
# The image decides.  Debian's security suite publishes linux-source-X of
# a point release hours or days before the signed image and the
# metapackages follow it, so "the newest of each" is not one kernel: take
# the ABI and the version from the image metapackage's dependency (the
# installed metapackage if there is one, else the archive's candidate),
# then install linux-source-<base>=<version> and
# linux-headers-<abi>=<version> explicitly, downgrading a newer source if
# one is installed.  When the archive has no source or headers of that
# version, stop with one message naming what it has and what would fix it.
# Nothing here knows a version: everything is read from dpkg and apt.
#
# Usage: kernel-set.sh <base> <image metapackage>
#   e.g. kernel-set.sh 6.12 linux-image-6.12-amd64
# Needs root only when something has to be installed.

set -eo pipefail
[ $# -eq 2 ] || { echo "usage: $0 <base> <image metapackage>" >&2; exit 2; }
BASE=$1
META=$2
SRC=linux-source-$BASE
me=kernel-set

# inst_version <package>: its version if installed, else nothing.
inst_version() {
	dpkg-query -W -f='${Status} ${Version}\n' "$1" 2>/dev/null |
		sed -n 's/^install ok installed //p' || true
}

# avail_versions <package>: the versions the archive has, one per line.
avail_versions() {
	apt-cache madison "$1" 2>/dev/null |
		awk -F'|' '{ gsub(/[[:space:]]/, "", $2); if ($2 != "") print $2 }' ||
		true
}

# The metapackage's "linux-image-<abi> (= <version>)" dependency: the
# installed one's, else the candidate's.  Sets ABI, VERSION, FROM.
read_image() {
	local deps
	ABI= VERSION= FROM=
	if [ -n "$(inst_version "$META")" ]; then
		deps=$(dpkg-query -W -f='${Depends}' "$META" 2>/dev/null)
		FROM="installed $META $(inst_version "$META")"
	else
		deps=$(apt-cache show --no-all-versions "$META" 2>/dev/null |
			sed -n 's/^Depends: //p' | head -n1)
		FROM="$META $(apt-cache show --no-all-versions "$META" 2>/dev/null |
			sed -n 's/^Version: //p' | head -n1) in the archive"
	fi
	ABI=$(echo "$deps" |
		sed -n 's/.*linux-image-\([0-9][^ ,]*\) (= \([^)]*\)).*/\1/p')
	VERSION=$(echo "$deps" |
		sed -n 's/.*linux-image-\([0-9][^ ,]*\) (= \([^)]*\)).*/\2/p')
}

# The packages of the set that are not installed in $VERSION.
WANT=()
want_set() {
	local p
	WANT=()
	for p in "$META" "linux-image-$ABI" "linux-headers-$ABI" "$SRC"; do
		case $p in
		"$META")
			[ -n "$(inst_version "$p")" ] || WANT+=("$p") ;;
		*)
			[ "$(inst_version "$p")" = "$VERSION" ] || WANT+=("$p=$VERSION") ;;
		esac
	done
}

# The one message for an archive without a consistent set.
no_set() {
	local what=$1 p v found="" fix cand
	for p in "linux-image-$ABI" "linux-headers-$ABI" "$SRC"; do
		v=$(avail_versions "$p" | tr '\n' ' ' | sed 's/ $//')
		found="$found; $p ${v:-(none)}"
		v=$(inst_version "$p")
		[ -z "$v" ] || found="$found (installed $v)"
	done
	fix="apt-get update && apt-get install --allow-downgrades $META linux-headers-$ABI=$VERSION $SRC=$VERSION"
	if [ -n "$(inst_version "$META")" ]; then
		cand=$(apt-cache show --no-all-versions "$META" 2>/dev/null |
			sed -n 's/^Version: //p' | head -n1)
		[ -z "$cand" ] || [ "$cand" = "$(inst_version "$META")" ] ||
			fix="$fix (or take the archive's newest kernel: apt-get install $META, then make deps again)"
	fi
	echo "$me: no consistent kernel set for base $BASE: $FROM boots linux-image-$ABI $VERSION, but $what; the archive has:${found#;}; when the archive has them (it is mid-update, try again later): $fix" >&2
	exit 1
}

read_image
if [ -z "$ABI" ] && [ "$(id -u)" = 0 ]; then
	apt-get update -qq
	updated=1
	read_image
fi
if [ -z "$ABI" ]; then
	echo "$me: cannot tell which image $META boots (not installed and not in the archive; apt-get update?)" >&2
	exit 1
fi
want_set
if [ ${#WANT[@]} -eq 0 ]; then
	echo "$me: base $BASE: linux-image-$ABI, linux-headers-$ABI, $SRC, all $VERSION"
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	echo "$me: base $BASE needs ${WANT[*]} and this is not root: apt-get install --allow-downgrades --no-install-recommends ${WANT[*]}" >&2
	exit 1
fi
if [ -z "$updated" ]; then
	apt-get update -qq
	read_image
	want_set
fi
for p in "${WANT[@]}"; do
	case $p in
	*=*)
		avail_versions "${p%%=*}" | grep -qxF "$VERSION" ||
			no_set "${p%%=*} $VERSION is not in it" ;;
	esac
done
echo "$me: base $BASE: installing ${WANT[*]} (the version of linux-image-$ABI, $FROM)"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	--allow-downgrades "${WANT[@]}" >/dev/null
want_set
[ ${#WANT[@]} -eq 0 ] || {
	echo "$me: still not consistent after apt-get install: ${WANT[*]}" >&2
	exit 1
}
echo "$me: base $BASE: linux-image-$ABI, linux-headers-$ABI, $SRC, all $VERSION"
