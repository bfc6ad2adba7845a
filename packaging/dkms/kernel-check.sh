# SPDX-License-Identifier: GPL-2.0
#
# Which kernels the package can build KVM for, and whether the packages
# that build needs are installed in the kernel's exact version.  Sourced
# (POSIX sh) by packaging/dkms/prepare.sh, and pasted into the package's
# preinst by packaging/make-deb.sh so that a host that cannot build is
# refused before anything is installed.

# kp_kernel_base <kernel release>: the base, "6.1" for "6.1.0-57-amd64",
# "6.12" for "6.12.118+deb12-amd64", "7.3" for "7.3.4+deb13-amd64".
kp_kernel_base() {
	echo "$1" | sed -n 's/^\([0-9]*\.[0-9]*\)\..*/\1/p'
}

# The bases the hook series applies to (dkms.conf's BUILD_EXCLUSIVE_KERNEL
# says the same).
kp_supported() {
	case $(kp_kernel_base "$1") in
	6.1|6.12|7.3)	return 0 ;;
	*)	return 1 ;;
	esac
}

# kp_pkg_version <package>: its version if its files are in place, else
# nothing.  Unpacked counts: when apt upgrades a kernel, its source and
# its headers together, dkms may build before all are configured.
kp_pkg_version() {
	dpkg-query -W -f='${Status} ${Version}\n' "$1" 2>/dev/null |
		sed -n -E 's/^install ok (installed|unpacked|half-configured|triggers-awaited|triggers-pending) //p'
}

# kp_check_kernel <kernel release>: true if linux-source-<base>, the
# kernel's image and its headers are installed in one version: the
# image's.  The source must be of exactly the kernel's version, newer is
# as wrong as older (Debian's archive serves a point release's source
# before its signed image).
# Otherwise say what is missing or differs on stderr, and fail.
kp_check_kernel() {
	kck_base=$(kp_kernel_base "$1")
	kck_src=$(kp_pkg_version "linux-source-$kck_base")
	kck_img=$(kp_pkg_version "linux-image-$1")
	[ -n "$kck_img" ] || kck_img=$(kp_pkg_version "linux-image-$1-unsigned")
	kck_hdr=$(kp_pkg_version "linux-headers-$1")
	if [ -z "$kck_img" ]; then
		echo "kvm-prefetch: kernel $1 is not from a Debian linux-image package; its source version is unknown" >&2
		return 1
	fi
	if [ -z "$kck_src" ] || [ ! -f "/usr/src/linux-source-$kck_base.tar.xz" ]; then
		echo "kvm-prefetch: linux-source-$kck_base is not installed; KVM for $1 is built from it (apt-get install linux-source-$kck_base=$kck_img)" >&2
		return 1
	fi
	if [ -z "$kck_hdr" ] || [ ! -e "/lib/modules/$1/build/Makefile" ]; then
		echo "kvm-prefetch: linux-headers-$1 is not installed (apt-get install linux-headers-$1=$kck_img)" >&2
		return 1
	fi
	if [ "$kck_src" != "$kck_img" ] || [ "$kck_hdr" != "$kck_img" ]; then
		echo "kvm-prefetch: versions differ for kernel $1: linux-image $kck_img, linux-headers $kck_hdr, linux-source-$kck_base $kck_src; KVM must be built from the source of exactly this kernel (apt-get install --allow-downgrades linux-source-$kck_base=$kck_img linux-headers-$1=$kck_img, or upgrade the kernel and reboot)" >&2
		return 1
	fi
	return 0
}

# kp_target_kernels: the installed kernels of a supported base that
# installing the package builds for, as dkms chooses them: the running
# one and the newest; every one when the running kernel is not
# installed here (a chroot or container).
kp_target_kernels() {
	ktk_all=$(for d in /lib/modules/*/kernel; do
			[ -d "$d" ] || continue
			d=${d%/kernel}
			kp_supported "${d##*/}" && echo "${d##*/}"
		done | sort -V)
	ktk_run=$(uname -r)
	if echo "$ktk_all" | grep -qx "$ktk_run"; then
		printf '%s\n%s\n' "$ktk_run" "$(echo "$ktk_all" | tail -n1)" |
			sort -u
	else
		echo "$ktk_all"
	fi
}
