#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The packaged install, tested on this machine:
#  - lintian is clean on the .debs;
#  - the preinst refuses (and says why) a kernel whose linux-source or
#    headers are missing or of another version;
#  - installing the .debs builds the modules with DKMS for every kernel
#    given (one per base: Debian 12's 6.1 and, when installed, its 6.12)
#    into /lib/modules/<abi>/updates/dkms, with our parameters and the
#    package version, modprobe would load them with the conffile's
#    options, and /lib/modules/<abi>/kernel is untouched;
#  - for each of those kernels, the test VM boots it, loads the DKMS-built
#    modules with modprobe from that tree, with the conffile's options
#    (changed to non-defaults), and runs smoke and kvm_prefetch_cmd (on
#    the packaged command);
#  - purging brings the stock modules back.
# The packages are purged on every exit, also on failure.
#
# Usage, as root, from the top of the repository:
#   install-test.sh <deb dir> <work dir> <test bin dir> <abi>=<image>...
# The test bin dir holds the built in-VM test programs (static, for every
# base); the first kernel is the default base's.  The last line is
# "N passed, N failed".

set -eo pipefail
# shellcheck source=scripts/args.sh
. "$(dirname "$0")/../scripts/args.sh"
kp_args "<deb dir> <work dir> <test bin dir> <abi>=<image>..." \
	DEBS WORK TESTBIN KERNELS... -- "$@"
# The default base's kernel, for the checks that need one.
ABI=${KERNELS[0]%%=*}
KMODDIR=/lib/modules/$ABI
CONF=/etc/modprobe.d/kvm-prefetch.conf
PKGS=(kvm-prefetch kvm-prefetch-dkms)
passed=0
failed=0

pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
# check <description> <command...>
check() {
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}
summary() { echo "deb-test: $passed passed, $failed failed"; }

[ "$(id -u)" = 0 ] || { echo "install-test: needs root" >&2; exit 1; }
dkms_deb=$(ls "$DEBS"/kvm-prefetch-dkms_*_all.deb)
cmd_deb=$(ls "$DEBS"/kvm-prefetch_*_amd64.deb)
version=$(dpkg-deb -f "$dkms_deb" Version)

# The state of the stock modules of every kernel: every file under
# kernel/, and kvm's checksums.
kernel_tree_state() {
	local k d
	for k in "${KERNELS[@]}"; do
		d=/lib/modules/${k%%=*}/kernel
		find "$d" -type f -printf '%p %s %T@ %i\n' | LC_ALL=C sort
		find "$d" -name 'kvm*.ko*' -exec md5sum {} + | LC_ALL=C sort
	done
}

purge() {
	dpkg --purge "${PKGS[@]}" > "$WORK/purge.log" 2>&1 || {
		cat "$WORK/purge.log"
		return 1
	}
}

rm -rf "$WORK"
mkdir -p "$WORK"

# ---- lintian -----------------------------------------------------------

lintian -I --pedantic "$dkms_deb" "$cmd_deb" > "$WORK/lintian.txt" 2>&1 &&
	lint_rc=0 || lint_rc=$?
grep -v 'running with root privileges' "$WORK/lintian.txt" > "$WORK/lintian.tags" || true
check "lintian exits 0 and reports no tag, pedantic included" \
	test "$lint_rc" = 0 -a ! -s "$WORK/lintian.tags"
sed 's/^/  lintian: /' "$WORK/lintian.tags"

# ---- the preinst refuses what it cannot build for -----------------------

# The package's own preinst, with dpkg-query answering for a host where
# something is missing or differs.  $1: what the fake dpkg-query does.
preinst_with() {
	local fake=$WORK/fake-bin
	rm -rf "$fake"
	mkdir -p "$fake"
	cat > "$fake/dpkg-query" <<EOF
#!/bin/sh
case " \$* " in
$1
esac
exec /usr/bin/dpkg-query "\$@"
EOF
	chmod +x "$fake/dpkg-query"
	PATH=$fake:$PATH sh "$WORK/control/preinst" install > "$WORK/preinst.out" 2>&1
}
dpkg-deb -e "$dkms_deb" "$WORK/control"
check "preinst accepts this host" preinst_with ""
preinst_refuses() {
	local what=$1 fake=$2 msg=$3
	if preinst_with "$fake"; then
		fail "preinst refuses $what (it did not)"
	elif grep -q "$msg" "$WORK/preinst.out" &&
	     grep -q "nothing changed" "$WORK/preinst.out"; then
		pass "preinst refuses $what: $(head -n1 "$WORK/preinst.out")"
	else
		fail "preinst refuses $what, saying '$msg': $(cat "$WORK/preinst.out")"
	fi
}
preinst_refuses "without linux-source" \
	'*" linux-source-6.1 "*) exit 1 ;;' "linux-source-6.1 is not installed"
preinst_refuses "without the headers" \
	"*\" linux-headers-$ABI \"*) exit 1 ;;" "linux-headers-$ABI is not installed"
# Per base: a source newer than the image (the archive mid-update) is
# refused with the exact linux-source-X=VERSION to install.
for k in "${KERNELS[@]}"; do
	k=${k%%=*}
	b=$(echo "$k" | sed -n 's/^\([0-9]*\.[0-9]*\)\..*/\1/p')
	v=$(dpkg-query -W -f='${Version}' "linux-image-$k")
	preinst_refuses "for $k with a newer linux-source-$b" \
		"*\" linux-source-$b \"*) echo \"install ok installed $v+newer\" ; exit 0 ;;" \
		"versions differ.*apt-get install --allow-downgrades linux-source-$b=$v"
done

# ---- install -------------------------------------------------------------

# The stock modules must be intact before we start and after each step.
stock_intact() {
	local k pkg d
	for k in "${KERNELS[@]}"; do
		d=/lib/modules/${k%%=*}/kernel/arch/x86/kvm
		pkg=$(dpkg-query -S "$d/kvm.ko*" 2>/dev/null | cut -d: -f1 | head -n1)
		[ -n "$pkg" ] && [ -z "$(dpkg -V "$pkg")" ] &&
			[ -n "$(find "$d" -name 'kvm-amd.ko*')" ] || return 1
	done
}
if ! stock_intact; then
	fail "the stock modules of ${KERNELS[*]%%=*} are not intact (dpkg -V) before the install; not installing"
	summary
	exit 1
fi
before=$(kernel_tree_state)
if dpkg-query -W -f='${Status}' kvm-prefetch-dkms 2>/dev/null | grep -q installed; then
	echo "install-test: kvm-prefetch-dkms is installed already; purging it first"
	purge
fi
trap 'purge || echo "FAIL: purging ${PKGS[*]}"' EXIT

# kvm-prefetch-dkms depends on a headers metapackage, which apt would
# pull for a user; "make deps" installs each kernel's headers but not the
# metapackage.  Install the default one, of the version of the installed
# image metapackage, so that dpkg -i finds the dependency as apt would
# (an archive mid-update may not have it: dpkg -i then says so).
if ! dpkg-query -W -f='${Status}' linux-headers-amd64 2>/dev/null |
		grep -q 'ok installed'; then
	v=$(dpkg-query -W -f='${Version}' linux-image-amd64 2>/dev/null)
	echo "install-test: installing linux-headers-amd64=$v, which kvm-prefetch-dkms depends on"
	[ -z "$v" ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "linux-headers-amd64=$v" \
		> "$WORK/headers.log" 2>&1 || cat "$WORK/headers.log"
fi
if dpkg -i "$dkms_deb" "$cmd_deb" > "$WORK/install.log" 2>&1; then
	pass "dpkg -i $(basename "$dkms_deb") $(basename "$cmd_deb")"
else
	cat "$WORK/install.log"
	for l in /var/lib/dkms/kvm-prefetch/*/build/make.log \
		 /var/lib/dkms/kvm-prefetch/*/*/*/log/make.log; do
		[ -f "$l" ] && tail -n 30 "$l"
	done
	fail "dpkg -i of the packages"
	summary
	exit 1
fi
# What DKMS built for one kernel: <abi>.
installed_for() {
	local ABI=$1 DKMSDIR=/lib/modules/$1/updates/dkms m f kvm_ko
	check "dkms status: kvm-prefetch/$version installed for $ABI" \
		grep -q "kvm-prefetch/$version, $ABI, x86_64: installed" \
		<(dkms status -m kvm-prefetch)

	for m in kvm kvm-amd kvm-intel kvm-prefetch-adaptive; do
		f=$(find "$DKMSDIR" -maxdepth 1 -name "$m.ko*" 2>/dev/null | head -n1)
		check "$m.ko in $DKMSDIR" test -n "$f"
	done
	kvm_ko=$(find "$DKMSDIR" -maxdepth 1 -name 'kvm.ko*' | head -n1)
	modinfo "$kvm_ko" > "$WORK/modinfo.txt"
	for p in prefetch_policy prefetch_nr_pages prefetch_gup prefetch_available; do
		check "modinfo $(basename "$kvm_ko") shows parameter $p" \
			grep -q "^parm: *$p:" "$WORK/modinfo.txt"
	done
	check "modinfo $(basename "$kvm_ko") shows version $version" \
		grep -q "^version: *$version\$" "$WORK/modinfo.txt"
	check "modinfo -k $ABI kvm resolves to $DKMSDIR" \
		grep -q "^$DKMSDIR/kvm.ko" <(modinfo -k "$ABI" -n kvm)
	modprobe -S "$ABI" --show-depends kvm_amd > "$WORK/modprobe.txt" 2>&1 || true
	check "modprobe -S $ABI kvm_amd would load $DKMSDIR/kvm.ko with the conffile's options" \
		grep -q "insmod $DKMSDIR/kvm.ko.* prefetch_policy=auto.* prefetch_nr_pages=8.* prefetch_gup=nofault" \
		"$WORK/modprobe.txt"
}
for k in "${KERNELS[@]}"; do
	installed_for "${k%%=*}"
done
check "$CONF is installed" test -f "$CONF"
check "/usr/sbin/kvm-prefetch is installed" test -x /usr/sbin/kvm-prefetch
check "the man page is installed" test -f /usr/share/man/man8/kvm-prefetch.8.gz
check "/lib/modules/*/kernel is untouched by the install" \
	test "$before" = "$(kernel_tree_state)"
check "dpkg -V: the stock modules are intact after the install" stock_intact

# ---- the test VM on the DKMS-built modules, one boot per kernel ------

# vm_on <abi> <image>
vm_on() {
	local ABI=$1 KIMAGE=$2 KMODDIR=/lib/modules/$1 DKMSDIR=/lib/modules/$1/updates/dkms
	local W=$WORK/$1 f root lib
	# mkinitramfs.sh takes the modules from <build>/modules: the DKMS ones.
	mkdir -p "$W/build/modules" "$W/vm/tests"
	for f in "$DKMSDIR"/*.ko*; do
		case $f in
		*.xz) xz -dc "$f" > "$W/build/modules/$(basename "$f" .xz)" ;;
		*) cp "$f" "$W/build/modules/" ;;
		esac
	done
	cp "$TESTBIN/smoke" "$TESTBIN/kvm_prefetch_cmd" "$W/vm/tests/"
	BUILD=$W/build VMDIR=$W/vm KMODDIR=$KMODDIR tests/vm/mkinitramfs.sh > /dev/null
	root=$W/vm/root

	# As on the host: the DKMS tree, its modules.dep entries, the conffile
	# (with non-default values, so that applying them shows) and the
	# packaged command with the libraries it needs.
	rm -rf "${root:?}/lib/modules/$ABI"
	mkdir -p "$root/lib/modules/$ABI/updates/dkms" "$root/etc/modprobe.d" "$root/usr/sbin"
	cp "$W"/build/modules/*.ko "$root/lib/modules/$ABI/updates/dkms/"
	sed -n 's/\.ko\.xz/.ko/g; \|^updates/dkms/|p' "$KMODDIR/modules.dep" |
		sed 's| kernel/[^ ]*||g' > "$root/lib/modules/$ABI/modules.dep"
	sed -e 's/^options kvm prefetch_nr_pages=.*/options kvm prefetch_nr_pages=24/' \
	    -e 's/^options kvm prefetch_gup=.*/options kvm prefetch_gup=fast/' \
		"$CONF" > "$root$CONF"
	cp /usr/sbin/kvm-prefetch "$root/usr/sbin/"
	for lib in $(ldd /usr/sbin/kvm-prefetch | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
	mv "$root/bin/kvm-reload" "$root/bin/kvm-reload.insmod"
	cp packaging/vm-kvm-reload "$root/bin/kvm-reload"
	(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) |
		gzip -1 > "$W/vm/initramfs.cpio.gz"

	if tests/vm/run-vm.sh --kernel "$KIMAGE" --initrd "$W/vm/initramfs.cpio.gz" \
		--mode test --log "$W/vm/test.log" --quiet \
		--append "kp.tests=smoke,kvm_prefetch_cmd" > "$W/vm/result.txt" 2>&1; then
		pass "in the VM on $ABI: $(tail -n1 "$W/vm/result.txt") (smoke, kvm_prefetch_cmd on modprobe-loaded DKMS modules)"
	else
		cat "$W/vm/result.txt"
		fail "in the VM on $ABI: $(tail -n1 "$W/vm/result.txt") (log: $W/vm/test.log)"
	fi
	check "$ABI: the VM loaded kvm.ko with the conffile's options" \
		grep -q "^PASS: $CONF sets prefetch_nr_pages=24 at load: live value 24" \
		"$W/vm/test.log"
	check "$ABI: the VM's kvm.ko is the packaged one (version $version)" \
		grep -q "^PASS: status shows kvm.ko's version $version" "$W/vm/test.log"
}
for k in "${KERNELS[@]}"; do
	vm_on "${k%%=*}" "${k#*=}"
done

# ---- purge ----------------------------------------------------------------

trap - EXIT
if purge; then pass "dpkg --purge ${PKGS[*]}"; else fail "dpkg --purge ${PKGS[*]}"; fi
for k in "${KERNELS[@]}"; do
	k=${k%%=*}
	check "no kvm module left in /lib/modules/$k/updates/dkms" \
		test -z "$(find "/lib/modules/$k/updates/dkms" -maxdepth 1 -name 'kvm*.ko*' 2>/dev/null)"
	check "modinfo -k $k kvm is the stock module again" \
		grep -q "^/lib/modules/$k/kernel/arch/x86/kvm/kvm.ko" <(modinfo -k "$k" -n kvm)
done
check "$CONF is gone" test ! -e "$CONF"
check "dkms has forgotten kvm-prefetch" test ! -e /var/lib/dkms/kvm-prefetch
check "/lib/modules/*/kernel is as before" test "$before" = "$(kernel_tree_state)"
check "dpkg -V: the stock modules are intact after the purge" stock_intact

summary
[ "$failed" = 0 ]
