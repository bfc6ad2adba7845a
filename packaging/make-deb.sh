#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build kvm-prefetch-dkms_<version>_all.deb and kvm-prefetch_<version>_amd64.deb
# with dh-dkms from a staged copy of the repository's files (tracked or
# new, never build/), then run lintian over them.
#
# Usage, from the top of the repository:
#   make-deb.sh <output dir> <path>...
# The paths are those "make modules" extracts from linux-source; the
# DKMS build extracts the same ones (packaging/dkms/src-paths).
# The version is 0.1.0~git<date of HEAD>.<HEAD> (+dirty with changes).

set -eo pipefail
[ $# -ge 2 ] || { echo "usage: $0 <output dir> <path>..." >&2; exit 2; }
OUT=$1
shift

version=0.1.0~git$(git log -1 --format=%cd.%h --date=format:%Y%m%d)
git diff --quiet HEAD -- arch include kvm-policy scripts packaging ||
	version=$version+dirty
stage=$OUT/src/kvm-prefetch-$version

rm -rf "$OUT"
mkdir -p "$stage"
git ls-files -co --exclude-standard -- arch include kvm-policy packaging \
	scripts/layout.sh scripts/apply-series.sh scripts/write-kbuild.sh |
	grep -v '^packaging/debian/' |
	while read -r f; do
		[ -e "$f" ] && cp --parents -p "$f" "$stage/"
	done
cp -a packaging/debian "$stage/debian"
printf '%s\n' "$@" > "$stage/packaging/dkms/src-paths"

# The preinst carries the same kernel checks as the DKMS build.
sed -i -e '/^#KERNEL_CHECK#$/{r packaging/dkms/kernel-check.sh' -e 'd}' \
	"$stage/debian/kvm-prefetch-dkms.preinst"

cat > "$stage/debian/changelog" <<CHANGELOG
kvm-prefetch ($version) unstable; urgency=medium

  * Built from the kvm-prefetch repository at $(git rev-parse --short HEAD).

 -- kvm-prefetch developers <dev@kvm-prefetch.invalid>  $(git log -1 --format=%aD)
CHANGELOG

(cd "$stage" && dpkg-buildpackage -b -us -uc) > "$OUT/build.log" 2>&1 || {
	tail -n 30 "$OUT/build.log" >&2
	echo "make-deb: dpkg-buildpackage failed, see $OUT/build.log" >&2
	exit 1
}
mv "$OUT"/src/*.deb "$OUT/"
ls "$OUT"/*.deb
