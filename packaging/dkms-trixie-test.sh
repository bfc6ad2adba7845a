#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The DKMS package on a Debian 13 host with the 7.3 backports kernel, run
# by hand on this Debian 12 machine (whose gcc-12 cannot build modules
# for 7.3): in a Debian 13 chroot made by debootstrap,
#  - trixie-backports is added to the chroot's own apt sources (the
#    machine's are not touched);
#  - the kernel set is resolved in the archive, never named: the newest
#    linux-image-7.3.<n>+<tag>-amd64, and linux-headers-<abi> and
#    linux-source-7.3 of exactly its version, installed with dkms (as
#    on a host that runs that kernel);
#  - the .debs of "make deb" are installed with apt (their Depends and
#    preinst kernel check as a user gets them);
#  - DKMS builds kvm.ko, kvm-amd.ko, kvm-intel.ko and the adaptive policy
#    for the 7.3 kernel (dkms build and dkms install, explicitly: the
#    package's autoinstall builds for the chroot's kernels, and the
#    running kernel is not one of them), with our parameters, the package
#    version and 7.3's vermagic;
#  - purging takes them away and leaves the stock modules intact.
# Nothing is booted: the chroot cannot load 7.3's modules into this
# machine's kernel.  A second run reuses the chroot and its packages
# (apt fetches only what changed); TRIXIE_CHROOT_FRESH=1 makes it anew.
# The chroot's /proc, /dev and /sys are mounted in a mount namespace of
# this script's own, so that none outlives it, even when it is killed.
#
# Usage, as root, from the top of the repository, after "make deb":
#   dkms-trixie-test.sh <deb dir> <chroot dir>
# e.g. packaging/dkms-trixie-test.sh build/deb /work/trixie-chroot
# The last line is "N passed, N failed".

set -eo pipefail
[ $# -eq 2 ] || { echo "usage: $0 <deb dir> <chroot dir>" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "dkms-trixie-test: needs root (debootstrap, chroot)" >&2; exit 1; }
BASE=7.3
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
DEBS=$(cd "$1" && pwd)
mkdir -p "$(dirname "$2")"
C=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")

# The mounts below the chroot, deepest first.
mounts_under() {
	findmnt -rn -o TARGET | awk -v c="$C" 'index($0, c "/") == 1' | sort -r
}

# ---- outside: run the test in a mount namespace, then check no mount is left
if [ -z "${KP_TRIXIE_NS:-}" ]; then
	if [ -n "$(mounts_under)" ]; then
		echo "dkms-trixie-test: mounts under $C (another run?), not touching it:" >&2
		mounts_under >&2
		exit 1
	fi
	rc=0
	KP_TRIXIE_NS=1 unshare --mount --propagation private -- "$0" "$@" || rc=$?
	# The namespace's summary line is not the last one: this one is.
	left=$(mounts_under)
	if [ -n "$left" ]; then
		echo "FAIL: mounts left under $C: $left"
		rc=1
	else
		echo "PASS: no mount left under $C"
	fi
	n=$(cat "$C.result" 2>/dev/null || echo "0 1")
	p=${n% *} f=${n#* }
	if [ -n "$left" ]; then f=$((f + 1)); else p=$((p + 1)); fi
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "FAIL: the test stopped (exit status $rc) with no failure counted"
		f=1
	fi
	echo "$p passed, $f failed"
	[ "$rc" = 0 ] && [ "$f" = 0 ]
	exit
fi

# ---- inside the namespace
passed=0
failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
check() {
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}
# The counts for the outer script, written on every exit.
trap 'echo "$passed $failed" > "$C.result"' EXIT
t0=$(date +%s)
took() {	# took: the time since the start
	echo "at $(($(date +%s) - t0)) s"
}
log=$C.log
: > "$log"
# inroot <command...>: run in the chroot, output to the log.
inroot() {
	chroot "$C" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive HOME=/root "$@" >> "$log" 2>&1
}
# out <command...>: run in the chroot, output to stdout.
out() {
	chroot "$C" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 HOME=/root "$@"
}
stop() {
	fail "$*"
	echo "dkms-trixie-test: stopped; the chroot's log is $log:" >&2
	tail -n 40 "$log" >&2
	exit 1
}

dkms_deb=$(ls "$DEBS"/kvm-prefetch-dkms_*_all.deb)
cmd_deb=$(ls "$DEBS"/kvm-prefetch_*_amd64.deb)
version=$(dpkg-deb -f "$dkms_deb" Version)

# ---- the chroot: debootstrap once (a marker says it finished)
if [ -n "${TRIXIE_CHROOT_FRESH:-}" ] || [ ! -f "$C/.kp-trixie" ]; then
	rm -rf "$C"
	if nice debootstrap --variant=minbase trixie "$C" "$mirror" >> "$log" 2>&1; then
		touch "$C/.kp-trixie"
		pass "debootstrap --variant=minbase trixie $C ($(took))"
	else
		stop "debootstrap trixie $C"
	fi
else
	pass "the Debian 13 chroot $C is there ($(took))"
fi
check "the chroot is Debian 13" grep -q '^VERSION_CODENAME=trixie$' "$C/etc/os-release"

mount -t proc proc "$C/proc"
mount --bind /dev "$C/dev"
mount --bind /dev/pts "$C/dev/pts" 2>/dev/null || true
mount -t sysfs sysfs "$C/sys"
cp -L /etc/resolv.conf "$C/etc/resolv.conf"

# The chroot's own apt sources, backports included.
cat > "$C/etc/apt/sources.list" <<EOF
deb $mirror trixie main
deb $mirror trixie-updates main
deb $security trixie-security main
deb $mirror trixie-backports main
EOF
inroot apt-get -q update || stop "apt-get update in the chroot"

# ---- the kernel set: the archive's newest 7.3 image decides
ABI='' V=''
for p in $(out apt-cache pkgnames "linux-image-$BASE" |
		grep -E "^linux-image-${BASE//./\\.}(\.[0-9]+)*\+[a-z0-9]+-amd64$"); do
	for v in $(out apt-cache madison "$p" | awk -F'|' '{ gsub(/[[:space:]]/, "", $2); print $2 }'); do
		if [ -z "$V" ] || dpkg --compare-versions "$v" gt "$V"; then
			ABI=${p#linux-image-} V=$v
		fi
	done
done
[ -n "$ABI" ] || stop "the archive has a linux-image-$BASE.*-amd64"
has() { out apt-cache madison "$1" | awk -F'|' '{ gsub(/[[:space:]]/, "", $2); print $2 }' | grep -qxF "$2"; }
for p in "linux-headers-$ABI" "linux-source-$BASE"; do
	has "$p" "$V" || stop "the archive has $p $V, of the newest image linux-image-$ABI"
done
pass "kernel set: linux-image-$ABI, linux-headers-$ABI, linux-source-$BASE, all $V ($(took))"
# The metapackage of the backports kernel, as a host following
# backports has it; our Depends names it first.
meta=()
has linux-headers-amd64 "$V" && meta=("linux-headers-amd64=$V" "linux-image-amd64=$V")

# -t trixie-backports: the image pre-depends on backports' linux-base.
if inroot apt-get install -y -q --no-install-recommends -t trixie-backports dkms \
		"linux-image-$ABI=$V" "linux-headers-$ABI=$V" "linux-source-$BASE=$V" \
		"${meta[@]}"; then
	pass "apt-get install dkms and the kernel set $V ${meta[*]} in the chroot ($(took))"
else
	stop "apt-get install dkms and the kernel set in the chroot"
fi
check "/usr/src/linux-source-$BASE.tar.xz and /lib/modules/$ABI/build/Makefile are there" \
	test -f "$C/usr/src/linux-source-$BASE.tar.xz" -a -f "$C/lib/modules/$ABI/build/Makefile"
# Debian 13 is merged-/usr: the package owns /usr/lib/modules.
stock=$( (out dpkg-query -S "/usr/lib/modules/$ABI/kernel/arch/x86/kvm" ||
	  out dpkg-query -S "/lib/modules/$ABI/kernel/arch/x86/kvm") 2>/dev/null |
	cut -d: -f1 | head -n1)
stock_intact() { [ -n "$stock" ] && [ -z "$(out dpkg -V "$stock")" ]; }
check "dpkg -V $stock: the stock modules are intact before the install" stock_intact

# ---- our packages
# shellcheck disable=SC2016
if out dpkg-query -W -f='${Status}\n' kvm-prefetch-dkms 2>/dev/null | grep -qv 'not-installed'; then
	inroot dpkg --purge kvm-prefetch kvm-prefetch-dkms || true
fi
rm -rf "$C/tmp/kp-debs"
mkdir -p "$C/tmp/kp-debs"
cp "$dkms_deb" "$cmd_deb" "$C/tmp/kp-debs/"
d=/tmp/kp-debs
if inroot apt-get install -y -q --no-install-recommends -t trixie-backports \
		"$d/$(basename "$dkms_deb")" "$d/$(basename "$cmd_deb")"; then
	pass "apt-get install ./$(basename "$dkms_deb") ./$(basename "$cmd_deb") ($(took))"
else
	stop "apt-get install of our packages"
fi
out dkms status -m kvm-prefetch > "$C.status" 2>&1 || true
sed 's/^/  after the install: dkms status: /' "$C.status"

# The postinst's autoinstall may have built already; otherwise build and
# install explicitly.  A build for 7.3 prints its own log on failure.
if ! grep -q "kvm-prefetch/$version, $ABI, x86_64: installed" "$C.status"; then
	if inroot dkms build -m kvm-prefetch -v "$version" -k "$ABI"; then
		pass "dkms build kvm-prefetch/$version -k $ABI ($(took))"
	else
		for l in "$C/var/lib/dkms/kvm-prefetch/$version/build/make.log" \
			 "$C/var/lib/dkms/kvm-prefetch/$version/$ABI"/*/log/make.log; do
			[ ! -f "$l" ] || tail -n 40 "$l"
		done
		stop "dkms build kvm-prefetch/$version -k $ABI"
	fi
	if inroot dkms install -m kvm-prefetch -v "$version" -k "$ABI"; then
		pass "dkms install kvm-prefetch/$version -k $ABI ($(took))"
	else
		stop "dkms install kvm-prefetch/$version -k $ABI"
	fi
else
	pass "the package's postinst built and installed kvm-prefetch/$version for $ABI ($(took))"
fi
check "dkms status: kvm-prefetch/$version installed for $ABI" \
	grep -q "kvm-prefetch/$version, $ABI, x86_64: installed" <(out dkms status -m kvm-prefetch)
DKMSDIR=/lib/modules/$ABI/updates/dkms
for m in kvm kvm-amd kvm-intel kvm-prefetch-adaptive; do
	f=$(find "$C$DKMSDIR" -maxdepth 1 -name "$m.ko*" 2>/dev/null | head -n1)
	check "$m.ko in $DKMSDIR ($(basename "${f:-none}"))" test -n "$f"
done
kvm_ko=$(cd "$C" && find ".$DKMSDIR" -maxdepth 1 -name 'kvm.ko*' | head -n1 | cut -c2-)
out modinfo "$kvm_ko" > "$C.modinfo" 2>&1 || true
for p in prefetch_policy prefetch_nr_pages prefetch_gup prefetch_available; do
	check "modinfo kvm: parameter $p" grep -q "^parm: *$p:" "$C.modinfo"
done
check "modinfo kvm: version $version" grep -q "^version: *$version\$" "$C.modinfo"
check "modinfo kvm: vermagic $ABI" grep -q "^vermagic: *$ABI " "$C.modinfo"
a=$(cd "$C" && find ".$DKMSDIR" -maxdepth 1 -name 'kvm-prefetch-adaptive.ko*' | head -n1 | cut -c2-)
check "modinfo kvm-prefetch-adaptive: depends on kvm, vermagic $ABI" \
	sh -c "chroot '$C' modinfo '$a' | grep -q '^depends: *kvm\$' &&
	       chroot '$C' modinfo '$a' | grep -q '^vermagic: *$ABI '"
check "modinfo -k $ABI kvm resolves to $DKMSDIR" \
	grep -q "^$DKMSDIR/kvm.ko" <(out modinfo -k "$ABI" -n kvm)
check "modprobe -S $ABI kvm_amd would load $DKMSDIR/kvm.ko with the conffile's options" \
	grep -q "insmod $DKMSDIR/kvm.ko.* prefetch_policy=auto.* prefetch_nr_pages=8.* prefetch_gup=nofault" \
	<(out modprobe -S "$ABI" --show-depends kvm_amd 2>&1)
check "/usr/sbin/kvm-prefetch runs (--help)" sh -c "chroot '$C' kvm-prefetch --help >/dev/null 2>&1 || chroot '$C' kvm-prefetch help >/dev/null 2>&1"
# Debian 13's dkms (3.2) moves a stock module of the same name into its
# original_module directory while ours is installed, and back on removal
# (Debian 12's 3.0 leaves it): dpkg -V misses exactly those three.
missing=$(out dpkg -V "$stock" | awk '$1 == "missing" { n = split($NF, a, "/"); print a[n] }' | LC_ALL=C sort | tr '\n' ' ')
check "dpkg -V $stock: only the stock kvm, kvm-amd, kvm-intel are missing (moved by dkms): ${missing:-none}" \
	test "$(out dpkg -V "$stock" | grep -vc '^missing.*/kernel/arch/x86/kvm/kvm\(-amd\|-intel\)\?\.ko')" = 0
check "dkms archived them in /var/lib/dkms/kvm-prefetch/original_module" \
	test "$(find "$C/var/lib/dkms/kvm-prefetch/original_module/$ABI" -name 'kvm*.ko*' ! -name '*.origin' 2>/dev/null | wc -l)" = 3

# ---- purge
if inroot dpkg --purge kvm-prefetch kvm-prefetch-dkms; then
	pass "dpkg --purge kvm-prefetch kvm-prefetch-dkms ($(took))"
else
	fail "dpkg --purge kvm-prefetch kvm-prefetch-dkms"
fi
check "no kvm module left in $DKMSDIR" \
	test -z "$(find "$C$DKMSDIR" -maxdepth 1 -name 'kvm*.ko*' 2>/dev/null)"
check "modinfo -k $ABI kvm is the stock module again" \
	grep -q "^/lib/modules/$ABI/kernel/arch/x86/kvm/kvm.ko" <(out modinfo -k "$ABI" -n kvm)
check "dkms has forgotten kvm-prefetch" test ! -e "$C/var/lib/dkms/kvm-prefetch"
check "dpkg -V $stock: the stock modules are intact after the purge" stock_intact
echo "dkms-trixie-test: $(($(date +%s) - t0)) s in all; the chroot's log is $log"
