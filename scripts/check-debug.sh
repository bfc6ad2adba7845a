#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-debug: the series in a full kernel tree, built as a debug
# kernel (lockdep, PROVE_RCU, KASAN, KFENCE, DEBUG_ATOMIC_SLEEP,
# DEBUG_LIST, kmemleak), booted in the test VM, running the in-VM tests
# with the kernel log checked after every program.
#
#  1. build/debug/linux: Debian's linux-source, committed as is (tag
#     kp-base), then the `make patches` series applied with `git am`.
#  2. The config: x86_64 defconfig + kvm_guest.config +
#     tests/debug/debug.config; every option the fragment sets must
#     survive in the final .config.
#  3. The kernel (build/debug/obj, O=) and, against it, Debian's
#     pristine KVM modules ("stock", for the tests that compare) and the
#     policy modules (out of tree, M=, as a third party builds them).
#     Everything the VM needs is kept in build/debug/kernel-<key>, <key>
#     the hash of the tree (with a plant, if any) and the .config: a run
#     that finds it does not build.
#  4. Two boots of that kernel, each with the kernel log checked after
#     every program: the in-VM tests (--mode test, as `make vm-test`) and
#     KVM's own selftests (--mode selftests, as `make selftests`: stock
#     modules, then ours, judged by tests/selftests/compare.sh).
#  5. The last line sums both: "N passed, N failed, N skipped"
#     (scripts/check-summary.sh over $D/results).
#
# Environment (from the Makefile): TOP, BUILD, SRC_PKG, SRC_VERSION,
# SRC_TARBALL, PRISTINE (the extracted pristine KVM directories), VMDIR
# (the test programs are in VMDIR/tests), ST_BIN (the selftests built by
# `make selftests-build`), ST_KNOWN (their tcg-known-failures.txt),
# SELFTESTS_TIMEOUT (per selftest, s), ST_VM_TIMEOUT (the selftests
# boot, s); optional PLANT (names of files
# tests/debug/plants/<name>.patch applied on top of the series), TESTS
# (in-VM programs and/or selftests to run; a boot with none of them is
# left out), RECORD (a file to write the run's record to).

set -eo pipefail
: "${TOP:?}" "${BUILD:?}" "${SRC_PKG:?}" "${SRC_VERSION:?}" "${SRC_TARBALL:?}"
: "${PRISTINE:?}" "${VMDIR:?}" "${ST_BIN:?}" "${ST_KNOWN:?}"
D=$BUILD/debug
SRC=$D/linux
OBJ=$D/obj
FRAG=$TOP/tests/debug/debug.config
J=${JOBS:-$(nproc)}

say() { echo "check-debug: $*"; }
# How long the kernel in $K took to build, and whether from scratch
# (build-kind: cold, incremental; absent in kernels built before it was
# recorded).
built() {
	echo "$(cat "$K/build-secs") s${1:-}$(sed 's/^/, /' "$K/build-kind" 2>/dev/null)"
}

# 1. The pristine base, committed once per Debian version.
base_subject="Debian $SRC_PKG $SRC_VERSION (pristine)"
if [ "$(git -C "$SRC" log -1 --format=%s kp-base 2>/dev/null)" != "$base_subject" ]; then
	say "committing $SRC_PKG $SRC_VERSION as the base (a few minutes)"
	rm -rf "$SRC" "$OBJ" "$D"/series.id
	mkdir -p "$D"
	tar -xJf "$SRC_TARBALL" -C "$D"
	mv "$D/$SRC_PKG" "$SRC"
	# Debian's .gitignore ignores the whole top level ("/*", then
	# "!/debian/"): keep the kernel's own rules only.
	sed -i -e '/^\/\*$/d' -e '/^!\/debian\/$/d' "$SRC/.gitignore"
	git -C "$SRC" init -q
	git -C "$SRC" add -A
	git -C "$SRC" -c user.name=kvm-prefetch -c user.email=dev@kvm-prefetch.invalid \
		commit -q -m "$base_subject"
	git -C "$SRC" tag -f kp-base >/dev/null
fi

# 2. The series, re-applied only when its contents changed (a fresh
# `make patches` gets new commit ids and dates, not new contents).
series=()
for p in "$BUILD"/patches/[0-9]*.patch; do
	case $p in */0000-*) ;; *) series+=("$p") ;; esac
done
[ ${#series[@]} -gt 0 ] || { echo "check-debug: no series in $BUILD/patches" >&2; exit 1; }
series_id=$(sed -e '/^From [0-9a-f]\{40\} /d' -e '/^Date: /d' -e '/^index /d' \
	"${series[@]}" | sha256sum | cut -c1-16)
git -C "$SRC" am --abort >/dev/null 2>&1 || true
# A plant of an earlier run is undone file by file (kbuild then
# rebuilds only those).
git -C "$SRC" diff --quiet HEAD || git -C "$SRC" checkout -q -- .
if [ "$(cat "$D/series.id" 2>/dev/null)" != "$series_id" ]; then
	say "applying the series with git am: ${#series[@]} patches"
	git -C "$SRC" checkout -q -f kp-base
	git -C "$SRC" -c user.name=kvm-prefetch -c user.email=dev@kvm-prefetch.invalid \
		am -q "${series[@]}"
	echo "$series_id" > "$D/series.id"
fi
say "base $(git -C "$SRC" rev-parse --short kp-base), series $(git -C "$SRC" rev-parse --short HEAD) ($(git -C "$SRC" rev-list --count kp-base..HEAD) commits)"
for plant in ${PLANT:-}; do
	p=$TOP/tests/debug/plants/$plant.patch
	[ -e "$p" ] || { echo "check-debug: no plant $p" >&2; exit 1; }
	git -C "$SRC" apply "$p"
	say "plant $plant applied: $(git -C "$SRC" diff --stat HEAD | tail -n1)"
done

# 3. The config, regenerated in its own directory; the build's .config
# is replaced only when it differs, so that kbuild rebuilds nothing.
gen=$D/config-gen
mkdir -p "$gen" "$OBJ"
make -s -C "$SRC" O="$gen" defconfig kvm_guest.config >/dev/null
"$SRC"/scripts/kconfig/merge_config.sh -m -O "$gen" "$gen/.config" "$FRAG" >/dev/null
make -s -C "$SRC" O="$gen" olddefconfig >/dev/null
missing=$(sed -n -e 's/^\(CONFIG_[A-Z0-9_]*=.*\)/\1/p' \
	-e 's/^# \(CONFIG_[A-Z0-9_]*\) is not set/\1/p' "$FRAG" |
	while read -r l; do
		case $l in
		*=*) grep -qx "$l" "$gen/.config" || echo "$l" ;;
		*) grep -q "^$l=" "$gen/.config" && echo "$l unset" ;;
		esac
	done || true)
if [ -n "$missing" ]; then
	echo "check-debug: the final .config does not have what $FRAG asks for:" >&2
	echo "$missing" >&2
	exit 1
fi
cmp -s "$gen/.config" "$OBJ/.config" || cp "$gen/.config" "$OBJ/.config"

key=$( { git -C "$SRC" rev-parse 'HEAD^{tree}'; git -C "$SRC" diff HEAD;
	cat "$OBJ/.config"; } | sha256sum | cut -c1-12)
K=$D/kernel-$key
if [ -e "$K/.done" ]; then
	say "kernel $key: cached in $K, not rebuilt (built in $(built))"
else
	# Cold: an object directory with nothing built in it yet.
	if [ -z "$(find "$OBJ" -name '*.o' -print -quit)" ]; then
		kind=cold
	elif [ -e "$OBJ/vmlinux" ]; then
		kind=incremental
	else
		kind="resumed (an interrupted build's objects)"
	fi
	say "kernel $key: building (make -j$J bzImage modules, $kind)"
	t0=$(date +%s)
	make -s -C "$SRC" O="$OBJ" -j"$J" bzImage modules
	# Debian's pristine KVM, built against this kernel exactly as
	# `make modules` builds ours against Debian's headers.
	st=$D/stock
	mkdir -p "$st"
	rsync -rc --delete "$PRISTINE"/ "$st"/
	"$TOP"/scripts/write-kbuild.sh "$TOP"/arch/x86/Kbuild.oot \
		"$st"/arch/x86/kvm/Makefile > "$st"/arch/x86/kvm/Kbuild
	make -s -C "$OBJ" M="$st"/arch/x86/kvm -j"$J" modules
	# Policy modules: out of tree, as a third party builds them.
	for d in kvm-policy/adaptive tests/vm/policy; do
		b=$D/policy/$(echo $d | tr / -)
		mkdir -p "$b"
		rsync -rc "$TOP/$d"/ "$b"/
		make -s -C "$OBJ" M="$b" KVM_PREFETCH_INCLUDE="$SRC"/include modules
	done
	rel=$(cat "$OBJ"/include/config/kernel.release)
	rm -rf "$K.tmp"
	mkdir -p "$K.tmp/modules" "$K.tmp/kmod/$rel/kernel"
	cp "$OBJ"/arch/x86/boot/bzImage "$OBJ"/.config "$K.tmp"/
	cp "$OBJ"/virt/lib/irqbypass.ko "$OBJ"/drivers/crypto/ccp/ccp.ko \
		"$st"/arch/x86/kvm/kvm.ko "$st"/arch/x86/kvm/kvm-amd.ko \
		"$K.tmp/kmod/$rel/kernel/"
	cp "$OBJ"/arch/x86/kvm/kvm.ko "$OBJ"/arch/x86/kvm/kvm-amd.ko \
		"$OBJ"/arch/x86/kvm/kvm-intel.ko "$D"/policy/*/*.ko "$K.tmp/modules/"
	echo $(( $(date +%s) - t0 )) > "$K.tmp/build-secs"
	echo "$kind" > "$K.tmp/build-kind"
	git -C "$SRC" rev-parse HEAD > "$K.tmp/series-commit"
	touch "$K.tmp/.done"
	rm -rf "$K"
	mv "$K.tmp" "$K"
	say "kernel $key: built in $(built)"
fi
rel=$(ls "$K/kmod")

# 4. The boots.  TESTS picks programs from either layer; a layer none of
# whose programs is picked is left out.
res=$D/results
rm -rf "$res"
mkdir -p "$res"
pick() {	# pick <names available...>: those in TESTS, or all
	local t
	if [ -z "${TESTS:-}" ]; then
		echo "$*"
		return
	fi
	for t in $TESTS; do
		case " $* " in *" $t "*) echo -n "$t " ;; esac
	done
}
rc=0

# 4a. The in-VM tests, as `make vm-test`.
vm_all=$(cd "$VMDIR/tests" && ls | sort | tr '\n' ' ')
vm_tests=$(pick $vm_all)
log=$VMDIR/test.log
if [ -n "$vm_tests" ]; then
	say "boot 1: the in-VM tests (--mode test)"
	KMODDIR=$K/kmod/$rel BUILD=$K VMDIR=$VMDIR "$TOP"/tests/vm/mkinitramfs.sh
	# A hung test is killed after DEBUG_TEST_TIMEOUT s (tests/vm/init).
	append="kp.test_timeout=${DEBUG_TEST_TIMEOUT:-1800}"
	[ -z "${TESTS:-}" ] || append="$append kp.tests=$(echo $vm_tests | tr -s ' ' ,)"
	"$TOP"/tests/vm/run-vm.sh --kernel "$K/bzImage" --initrd "$VMDIR/initramfs.cpio.gz" \
		--mode test --log "$log" --timeout "${DEBUG_TIMEOUT:-5400}" --stall 600 \
		--append "$append" | tee "$VMDIR/result.txt" || rc=1
	cp "$VMDIR/result.txt" "$res/vm-test.txt"
fi

# 4b. KVM's selftests, as `make selftests`: Debian's stock KVM built
# against this kernel first, then ours, each test followed by a kernel
# log check.  tests/debug/selftests-known.txt lists, with the reason, the
# runs that cannot run on the debug kernel even on stock (none so far);
# they are not run and count as skipped, like tcg-known-failures.txt.
STVM=$D/vm-selftests
st_log=$STVM/selftests.log
dknown=$TOP/tests/debug/selftests-known.txt
known=$D/selftests-known.txt
{ cat "$ST_KNOWN"; [ ! -e "$dknown" ] || cat "$dknown"; } > "$known"
dskip=" $( [ ! -e "$dknown" ] || sed -e 's/[[:space:]].*//' -e '/^#/d' -e '/^$/d' "$dknown" | tr '\n' ' ') "
st_all=""
for t in $(cd "$ST_BIN" && ls | grep -v '\.args$' | sort); do
	case $dskip in *" $t "*) continue ;; esac
	st_all="$st_all $t"
done
st_tests=$(pick $st_all)
if [ -n "$st_tests" ]; then
	say "boot 2: KVM's selftests (--mode selftests), stock modules then ours, ${SELFTESTS_TIMEOUT} s per test"
	mkdir -p "$STVM"
	KMODDIR=$K/kmod/$rel BUILD=$K VMDIR=$STVM SELFTESTS_BIN=$ST_BIN \
		"$TOP"/tests/vm/mkinitramfs.sh
	rm -f "$st_log.retry"
	append="kp.st_timeout=$SELFTESTS_TIMEOUT"
	[ -z "${TESTS:-}" ] && [ -z "$(echo $dskip)" ] ||
		append="$append kp.tests=$(echo $st_tests | tr -s ' ' ,)"
	# run-vm.sh's count is dropped as in `make selftests` (compare.sh
	# counts the same FAIL: lines), but not its verdict: a splat after
	# a stock test is a failure here (compare.sh --splats-fail).
	(
		r=0
		"$TOP"/tests/vm/run-vm.sh --kernel "$K/bzImage" \
			--initrd "$STVM/initramfs.cpio.gz" --mode selftests \
			--log "$st_log" --quiet --timeout "$ST_VM_TIMEOUT" \
			--stall $((SELFTESTS_TIMEOUT + 120)) --retry-wedged \
			--append "$append" |
			awk '!/^[0-9]+ passed, [0-9]+ failed/' || r=1
		[ ! -e "$st_log.retry" ] || st_log=$st_log.retry
		echo
		"$TOP"/tests/selftests/compare.sh --splats-fail --known "$known" "$st_log" || r=1
		exit $r
	) | tee "$STVM/result.txt" || rc=1
	[ ! -e "$st_log.retry" ] || st_log=$st_log.retry
	cp "$STVM/result.txt" "$res/selftests.txt"
fi
[ -n "$vm_tests$st_tests" ] || { echo "check-debug: TESTS=\"$TESTS\" names no program of either boot" >&2; exit 1; }

# 5. Both boots' counts, then their sum (the run's last line).
echo
summary=$("$TOP"/scripts/check-summary.sh debug="$res") || rc=1

# The record: what ran on which kernel, and what the checkers said.
if [ -n "${RECORD:-}" ] && [ -z "${PLANT:-}" ] && [ -z "${TESTS:-}" ]; then
	{
		echo "# make check-debug, $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "base:    $SRC_PKG $SRC_VERSION, commit $(git -C "$SRC" rev-parse kp-base)"
		echo "series:  $(git -C "$SRC" rev-list --count kp-base..HEAD) patches (make patches, git am), HEAD $(cat "$K/series-commit")"
		echo "kernel:  $rel, key $key, built in $(built " (the last build of this tree and config)")"
		echo
		echo "## Debug options (final .config)"
		grep -E '^CONFIG_(KASAN|KASAN_GENERIC|KASAN_INLINE|LOCKDEP|PROVE_LOCKING|PROVE_RCU|DEBUG_ATOMIC_SLEEP|DEBUG_LIST|KFENCE|DEBUG_KMEMLEAK|DEBUG_SPINLOCK|DEBUG_MUTEXES|DEBUG_RWSEMS|DEBUG_LOCK_ALLOC|TRACE_IRQFLAGS|PREEMPT_COUNT|PREEMPT_VOLUNTARY)=' "$K/.config"
		echo
		echo "## Boot 1: in-VM tests (--mode test), programs run"
		sed -n 's/^@@END \([^ ]*\) rc=\(.*\)/\1 rc=\2/p' "$log.clean"
		grep -h '^vm: [0-9]* s in QEMU' "$res/vm-test.txt"
		echo
		echo "## Boot 2: KVM selftests (--mode selftests), stock modules vs ours"
		sed -n '/^selftest  /,$p' "$res/selftests.txt"
		echo
		echo "## Reports found (both boots)"
		grep -hE '^(splat: |FAIL: )' "$res/vm-test.txt" "$res/selftests.txt" || echo "none"
		echo
		echo "## Result"
		echo "$summary"
	} > "$RECORD"
fi
echo "$summary"
exit $rc
