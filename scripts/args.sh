# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Positional arguments of the repository's scripts, sourced:
#
#   . "$(dirname "$0")/args.sh"
#   kp_args "<pristine tree> <work dir>" PRISTINE WORK -- "$@"
#
# kp_args <usage> NAME... -- ARG...: each ARG into the variable NAME of
# its place; a last NAME written "NAME..." is an array that takes the
# rest (at least one).  Too few or too many ARGs: "usage: <script>
# <usage>" on stderr and exit 2.

# shellcheck disable=SC2034
kp_args() {
	local usage=$1 rest='' n=0
	local -a names=()

	shift
	while [ "$1" != -- ]; do
		names+=("$1")
		shift
	done
	shift
	case ${names[-1]} in
	*...) rest=${names[-1]%...}; unset 'names[-1]' ;;
	esac
	if [ $# -lt ${#names[@]} ] || { [ -z "$rest" ] && [ $# -gt ${#names[@]} ]; } ||
	   { [ -n "$rest" ] && [ $# -eq ${#names[@]} ]; }; then
		echo "usage: $0 $usage" >&2
		exit 2
	fi
	for n in "${names[@]}"; do
		printf -v "$n" '%s' "$1"
		shift
	done
	[ -z "$rest" ] || eval "$rest=(\"\$@\")"
}
