#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Cross-build a whole arm64 kernel (Image) from Debian's linux-source with
# arm64's hook series (arch/arm64/<base>/series) applied and our files
# overlaid (scripts/layout.sh, KP_ARCH=arm64): on arm64 KVM is built into
# the kernel, so there is no out-of-tree module build.
#
#   $OUT/pristine	the whole tarball, extracted once per source version
#   $OUT/linux		the source tree built from: hard links to pristine,
#			except the files the series or the overlay change
#   $OUT/stage		those files, rebuilt from scratch on every run
#   $OUT/obj		kbuild's output (O=), kept between runs
#   $OUT/Image		the result
#
# Only files whose contents changed are replaced in $OUT/linux (never
# written through a hard link), so a second run recompiles only what the
# series or our files changed since.  A file that left the series gets
# its pristine contents back.
#
# Usage: arm64-kernel.sh   (environment: OUT SRC_PKG SRC_VERSION
#        SRC_TARBALL CONFIG_FRAGMENT [JOBS] [KP_BASE] [ARM64_PLANT])

set -eo pipefail
: "${OUT:?}" "${SRC_PKG:?}" "${SRC_VERSION:?}" "${SRC_TARBALL:?}"
: "${CONFIG_FRAGMENT:?}"
JOBS=${JOBS:-2}
export KP_ARCH=arm64 KP_BASE=${KP_BASE:-6.1}
# shellcheck source=scripts/layout.sh
. "$(dirname "$0")/layout.sh"

PRISTINE=$OUT/pristine
TREE=$OUT/linux
STAGE=$OUT/stage
OBJ=$OUT/obj
KMAKE=(make -C "$TREE" O="$OBJ" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)

mkdir -p "$OUT"
if [ ! -e "$OUT/.pristine-$SRC_VERSION" ]; then
	echo "arm64: extracting $SRC_PKG $SRC_VERSION"
	rm -rf "$PRISTINE" "$TREE" "$OBJ" "$OUT"/.pristine-* "$OUT/staged.list"
	mkdir -p "$PRISTINE"
	tar -xJf "$SRC_TARBALL" -C "$PRISTINE" --strip-components=1
	touch "$OUT/.pristine-$SRC_VERSION"
fi
if [ ! -d "$TREE" ]; then
	cp -al "$PRISTINE" "$TREE"
	: > "$OUT/staged.list"
fi

# The stage: each file a patch of the series touches, from pristine, then
# the series, then our files.
rm -rf "$STAGE"
mkdir -p "$STAGE"
series=$(kp_series)
for p in $series; do
	sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$p"
done | sort -u | while read -r f; do
	[ -e "$PRISTINE/$f" ] || continue
	mkdir -p "$STAGE/$(dirname "$f")"
	cp "$PRISTINE/$f" "$STAGE/$f"
done
"$(dirname "$0")/apply-series.sh" "$STAGE"
kp_overlay "$STAGE"
# Planted bugs (ARM64_PLANT="name...": tests/arm64/plants/<name>.patch),
# for seeing a test fail.  The stage is rebuilt on every run, so the next
# run without them puts the files back and kbuild recompiles only those.
for plant in ${ARM64_PLANT:-}; do
	p=$(dirname "$0")/../tests/arm64/plants/$plant.patch
	[ -e "$p" ] || { echo "arm64: no plant $p" >&2; exit 1; }
	patch -s -p1 -d "$STAGE" < "$p"
	echo "arm64: plant $plant applied"
done

# Sync the stage into the tree.
(cd "$STAGE" && find . -type f | sed 's|^\./||' | LC_ALL=C sort) \
	> "$OUT/staged.list.new"
LC_ALL=C comm -23 "$OUT/staged.list" "$OUT/staged.list.new" |
while read -r f; do
	rm -f "$TREE/$f"
	[ ! -e "$PRISTINE/$f" ] || cp "$PRISTINE/$f" "$TREE/$f"
done
while read -r f; do
	cmp -s "$STAGE/$f" "$TREE/$f" && continue
	mkdir -p "$TREE/$(dirname "$f")"
	rm -f "$TREE/$f"
	cp "$STAGE/$f" "$TREE/$f"
done < "$OUT/staged.list.new"
mv "$OUT/staged.list.new" "$OUT/staged.list"

# The config: allnoconfig plus the fragment, redone when the fragment
# changes; olddefconfig on every run for symbols the series adds.
mkdir -p "$OBJ"
id=$(cat "$CONFIG_FRAGMENT" "$OUT/.pristine-$SRC_VERSION" | md5sum | cut -c1-8)
id="$id-$SRC_VERSION"
if [ "$(cat "$OBJ/.kp-config-id" 2>/dev/null)" != "$id" ]; then
	"${KMAKE[@]}" -s KCONFIG_ALLCONFIG="$CONFIG_FRAGMENT" allnoconfig
	echo "$id" > "$OBJ/.kp-config-id"
fi
"${KMAKE[@]}" -s olddefconfig
bad=0
while read -r line; do
	case $line in CONFIG_*=*) ;; *) continue ;; esac
	grep -qx -- "$line" "$OBJ/.config" || {
		echo "arm64: config: $line did not stick" \
		     "($(grep "^${line%%=*}=\|# ${line%%=*} is" "$OBJ/.config"))" >&2
		bad=1
	}
done < "$CONFIG_FRAGMENT"
[ $bad = 0 ] || exit 1

start=$(date +%s)
nice -n 10 "${KMAKE[@]}" -j"$JOBS" Image modules
end=$(date +%s)
cp "$OBJ/arch/arm64/boot/Image" "$OUT/Image.new"
mv "$OUT/Image.new" "$OUT/Image"
echo "arm64: Image built in $((end - start)) s ($(stat -c %s "$OUT/Image") bytes)"

# The uAPI headers as a VMM built against this kernel sees them, for the
# test programs (tests/arm64/run-vm.sh, UAPI=$OUT/uapi/include).
"${KMAKE[@]}" -s INSTALL_HDR_PATH="$OUT/uapi" headers_install
