#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The packaged install, tested on this machine:
#  - lintian is clean on the .debs;
#  - the preinst refuses (and says why) a kernel whose linux-source or
#    headers are missing or of another version;
#  - installing the .debs builds the modules with DKMS for the default
#    base's ABI into /lib/modules/<abi>/updates/dkms, with our
#    parameters and the package version, modprobe would load them with
#    the conffile's options, and /lib/modules/<abi>/kernel is untouched;
#  - the test VM loads the DKMS-built modules with modprobe from that
#    tree, with the conffile's options (changed to non-defaults), and runs
#    smoke and kvm_prefetch_cmd (on the packaged command);
#  - purging brings the stock modules back.
# The packages are purged on every exit, also on failure.
#
# Usage, as root, from the top of the repository:
#   install-test.sh <deb dir> <abi> <kernel image> <work dir> <test bin dir>
# The test bin dir holds the built in-VM test programs.  The last line is
# "N passed, N failed".

set -eo pipefail
[ $# -eq 5 ] || {
	echo "usage: $0 <deb dir> <abi> <kernel image> <work dir> <test bin dir>" >&2
	exit 2
}
DEBS=$1
ABI=$2
KIMAGE=$3
WORK=$4
TESTBIN=$5
KMODDIR=/lib/modules/$ABI
DKMSDIR=$KMODDIR/updates/dkms
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

# The state of the stock modules: every file under kernel/, and kvm's
# checksums.
kernel_tree_state() {
	find "$KMODDIR/kernel" -type f -printf '%P %s %T@ %i\n' | LC_ALL=C sort
	find "$KMODDIR/kernel" -name 'kvm*.ko*' -exec md5sum {} + | LC_ALL=C sort
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
preinst_refuses "with another linux-source version" \
	'*" linux-source-6.1 "*) echo "install ok installed 6.1.0-0" ; exit 0 ;;' \
	"versions differ"

# ---- install -------------------------------------------------------------

# The stock modules must be intact before we start and after each step.
stock_intact() {
	local pkg
	pkg=$(dpkg-query -S "$KMODDIR/kernel/arch/x86/kvm/kvm.ko*" 2>/dev/null | cut -d: -f1 | head -n1)
	[ -n "$pkg" ] && [ -z "$(dpkg -V "$pkg")" ] &&
		[ -n "$(find "$KMODDIR/kernel/arch/x86/kvm" -name 'kvm-amd.ko*')" ]
}
if ! stock_intact; then
	fail "the stock modules in $KMODDIR/kernel are not intact (dpkg -V) before the install; not installing"
	summary
	exit 1
fi
before=$(kernel_tree_state)
if dpkg-query -W -f='${Status}' kvm-prefetch-dkms 2>/dev/null | grep -q installed; then
	echo "install-test: kvm-prefetch-dkms is installed already; purging it first"
	purge
fi
trap 'purge || echo "FAIL: purging ${PKGS[*]}"' EXIT

if dpkg -i "$dkms_deb" "$cmd_deb" > "$WORK/install.log" 2>&1; then
	pass "dpkg -i $(basename "$dkms_deb") $(basename "$cmd_deb")"
else
	cat "$WORK/install.log"
	for l in /var/lib/dkms/kvm-prefetch/*/build/make.log \
		 /var/lib/dkms/kvm-prefetch/*/"$ABI"/*/log/make.log; do
		[ -f "$l" ] && tail -n 30 "$l"
	done
	fail "dpkg -i of the packages"
	summary
	exit 1
fi
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
check "$CONF is installed" test -f "$CONF"
check "/usr/sbin/kvm-prefetch is installed" test -x /usr/sbin/kvm-prefetch
check "the man page is installed" test -f /usr/share/man/man8/kvm-prefetch.8.gz
check "$KMODDIR/kernel is untouched by the install" \
	test "$before" = "$(kernel_tree_state)"
check "dpkg -V: the stock modules are intact after the install" stock_intact

# ---- the test VM on the DKMS-built modules ------------------------------

# mkinitramfs.sh takes the modules from <build>/modules: the DKMS ones.
mkdir -p "$WORK/build/modules" "$WORK/vm/tests"
for f in "$DKMSDIR"/*.ko*; do
	case $f in
	*.xz) xz -dc "$f" > "$WORK/build/modules/$(basename "$f" .xz)" ;;
	*) cp "$f" "$WORK/build/modules/" ;;
	esac
done
cp "$TESTBIN/smoke" "$TESTBIN/kvm_prefetch_cmd" "$WORK/vm/tests/"
BUILD=$WORK/build VMDIR=$WORK/vm KMODDIR=$KMODDIR tests/vm/mkinitramfs.sh > /dev/null
root=$WORK/vm/root

# As on the host: the DKMS tree, its modules.dep entries, the conffile
# (with non-default values, so that applying them shows) and the
# packaged command with the libraries it needs.
rm -rf "${root:?}/lib/modules/$ABI"
mkdir -p "$root/lib/modules/$ABI/updates/dkms" "$root/etc/modprobe.d" "$root/usr/sbin"
cp "$WORK"/build/modules/*.ko "$root/lib/modules/$ABI/updates/dkms/"
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
	gzip -1 > "$WORK/vm/initramfs.cpio.gz"

if tests/vm/run-vm.sh --kernel "$KIMAGE" --initrd "$WORK/vm/initramfs.cpio.gz" \
	--mode test --log "$WORK/vm/test.log" --retry-wedged --quiet \
	--append "kp.tests=smoke,kvm_prefetch_cmd" > "$WORK/vm/result.txt" 2>&1; then
	pass "in the VM: $(tail -n1 "$WORK/vm/result.txt") (smoke, kvm_prefetch_cmd on modprobe-loaded DKMS modules)"
else
	cat "$WORK/vm/result.txt"
	fail "in the VM: $(tail -n1 "$WORK/vm/result.txt") (log: $WORK/vm/test.log)"
fi
check "the VM loaded kvm.ko with the conffile's options" \
	grep -q "^PASS: $CONF sets prefetch_nr_pages=24 at load: live value 24" \
	"$WORK/vm/test.log"
check "the VM's kvm.ko is the packaged one (version $version)" \
	grep -q "^PASS: status shows kvm.ko's version $version" "$WORK/vm/test.log"

# ---- purge ----------------------------------------------------------------

trap - EXIT
if purge; then pass "dpkg --purge ${PKGS[*]}"; else fail "dpkg --purge ${PKGS[*]}"; fi
check "no kvm module left in $DKMSDIR" \
	test -z "$(find "$DKMSDIR" -maxdepth 1 -name 'kvm*.ko*' 2>/dev/null)"
check "modinfo -k $ABI kvm is the stock module again" \
	grep -q "^$KMODDIR/kernel/arch/x86/kvm/kvm.ko" <(modinfo -k "$ABI" -n kvm)
check "$CONF is gone" test ! -e "$CONF"
check "dkms has forgotten kvm-prefetch" test ! -e /var/lib/dkms/kvm-prefetch
check "$KMODDIR/kernel is as before" test "$before" = "$(kernel_tree_state)"
check "dpkg -V: the stock modules are intact after the purge" stock_intact

summary
[ "$failed" = 0 ]
