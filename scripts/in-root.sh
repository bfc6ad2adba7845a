#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a command in a build root (scripts/trixie-root.sh) with every path
# of this repository the same as outside: in a mount namespace of its
# own, the repository's top directory, /tmp (make's jobserver, mktemp),
# /dev and /proc are bind-mounted at the same absolute paths inside the
# root, then the command runs chrooted there, in the current directory.
# The mounts die with the namespace, so none outlives the command, and
# nothing of the host's toolchain or C library is seen.  A current
# directory inside ROOT is taken as the root's own path (ROOT/usr/src/x
# runs in /usr/src/x).
#
# Usage: in-root.sh ROOT COMMAND [ARG...]    (as root)

set -eo pipefail
[ $# -ge 2 ] || { echo "usage: $0 ROOT COMMAND [ARG...]" >&2; exit 2; }
root=$(cd "$1" && pwd)
shift
top=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$root/usr/bin/make" ] || { echo "in-root: no build root in $root (make deps)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "in-root: needs root (unshare, chroot)" >&2; exit 1; }

cwd=$PWD
case $cwd/ in
"$root"/*) cwd=${cwd#"$root"}; cwd=${cwd:-/} ;;
"$top"/*|/tmp/*) ;;
*) echo "in-root: $cwd is not seen in the root (only $top, /tmp and the root's own)" >&2; exit 1 ;;
esac
# The inner shell gets the paths as arguments: no quoting games.
exec unshare --mount --propagation private -- /bin/sh -ec '
	root=$1 top=$2 cwd=$3
	shift 3
	mount --bind /tmp "$root/tmp"
	mount --bind /dev "$root/dev"
	mount -t proc proc "$root/proc"
	mkdir -p "$root$top"
	mount --bind "$top" "$root$top"
	exec chroot "$root" /bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$cwd" "$@"
' in-root "$root" "$top" "$cwd" "$@"
