#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a command and append "<label> <seconds> s" to FILE, whatever its
# exit status (which it returns): "make check" times each of its layers
# this way, and scripts/check-summary.sh prints the times.
#
# Usage: timed.sh FILE LABEL COMMAND...

file=${1:?usage: timed.sh FILE LABEL COMMAND...}
label=${2:?usage: timed.sh FILE LABEL COMMAND...}
shift 2
start=$(date +%s)
"$@"
rc=$?
echo "$label $(( $(date +%s) - start )) s" >> "$file"
exit $rc
