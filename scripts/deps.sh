#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages given that are not installed yet (apt-get
# update once, then one apt-get install); needs root only when something
# is missing.
#
# Usage: deps.sh <package>...

set -eo pipefail
# One dpkg-query for all of them (make check asks before every layer).
# (It fails when it does not know a package: that one is missing.)
installed=" $({ dpkg-query -W -f='${Package} ${Status}\n' "$@" 2>/dev/null || true; } |
	awk '/ install ok installed$/ { printf "%s ", $1 }')"
missing=""
for p in "$@"; do
	case $installed in *" $p "*) ;; *) missing="$missing $p" ;; esac
done
[ -n "$missing" ] || exit 0

echo "deps: installing:$missing"
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages and not root" >&2
	exit 1
fi
apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	--no-install-recommends $missing >/dev/null
