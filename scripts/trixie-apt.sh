# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Debian 13's suites through a private apt configuration, without touching
# this machine's own apt sources: the source list (trixie, -updates,
# -security, -backports, signed by the trixie keys Debian 12's
# debian-archive-keyring holds), its lists, an empty dpkg status and a
# cache, all under one directory.  Sourced by scripts/qemu-current.sh and
# scripts/trixie-root.sh.  DEBIAN_MIRROR and DEBIAN_SECURITY_MIRROR
# choose the mirrors.

# kp_trixie_apt <apt dir>: write the configuration into <apt dir> and set
# the array apt_opts, which makes apt-get and apt-cache use it.
kp_trixie_apt() {
	local d=$1
	local mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
	local security=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
	local keyring=/usr/share/keyrings/debian-archive-keyring.gpg

	mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
	: > "$d/status"
	{
		echo "deb [signed-by=$keyring] $mirror trixie main"
		echo "deb [signed-by=$keyring] $mirror trixie-updates main"
		echo "deb [signed-by=$keyring] $security trixie-security main"
		echo "deb [signed-by=$keyring] $mirror trixie-backports main"
	} > "$d/sources.list"
	# shellcheck disable=SC2034  # for the caller
	apt_opts=(-qq -o "Dir::State::Lists=$d/lists"
		-o "Dir::State::status=$d/status"
		-o "Dir::Etc::SourceList=$d/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::Cache=$d/cache" -o APT::Architecture=amd64
		-o Debug::NoLocking=1 -o APT::Sandbox::User=root)
}
