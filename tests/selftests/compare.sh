#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Judge a "make selftests" run: parse the guest's serial log (the
# "selftest: <stock|ours> <test> rc=<n> secs=<n>" lines written by
# tests/vm/init in kp.mode=selftests) and print, per KVM selftest, the
# result on Debian's stock modules and on ours.
#
#   pass     exit status 0          skip     4 (KSFT_SKIP)
#   timeout  killed at the deadline  fail     anything else, or a kernel
#   missing  no result (guest died)           log splat right after it
#
# A test that passes on stock must pass on ours; anything else there is a
# regression.  Tests that do not pass on stock (skip, fail, timeout) are
# not comparable and count as skipped; the ones that fail or time out are
# listed, and tcg-known-failures.txt lists those not run at all, with the
# reason.  Any other FAIL: line in the log (module load, guest did not
# finish) is a failure too.
#
# Exit status 1 on any regression or failure.  The last line is
# "selftests: N passed, N failed, N skipped" (passed = passes on both,
# failed = regressions and other failures, skipped = not passing on
# stock, including the known TCG failures).
#
# --splats-fail (make check-debug): a kernel log report after a test is a
# failure whichever modules ran it, stock included; without it a report
# after a stock test makes the test "not comparable" (skipped).
#
# usage: compare.sh [--splats-fail] [--known tcg-known-failures.txt] LOG
set -euo pipefail

known=""
splats_fail=0
while [ $# -gt 1 ]; do
	case $1 in
	--known) known=$2; shift 2 ;;
	--splats-fail) splats_fail=1; shift ;;
	*) break ;;
	esac
done
[ $# = 1 ] || { echo "usage: compare.sh [--splats-fail] [--known FILE] LOG" >&2; exit 2; }
log=$1
[ -r "$log" ] || { echo "compare.sh: cannot read $log" >&2; exit 2; }

tr -d '\r' < "$log" | awk -v known="$known" -v splats_fail="$splats_fail" '
# A titled list of n lines, with the last lines of each test on side.
function listing(title, n, lines, names, side,    i, t) {
	print ""
	print title
	for (i = 1; i <= n; i++) {
		print "  " lines[i]
		t = names[i]
		if (out[side, t] != "")
			print "    its last lines on " side ":" out[side, t]
	}
}
function result(rc) {
	if (rc == 0) return "pass"
	if (rc == 4) return "skip"
	if (rc == 124) return "timeout"
	return "fail(" rc ")"
}
BEGIN {
	if (known != "") {
		while ((getline line < known) > 0) {
			if (line ~ /^[ \t]*(#|$)/)
				continue
			name = line
			sub(/[ \t].*/, "", name)
			reason = line
			sub(/^[^ \t]+[ \t]+/, "", reason)
			kreason[name] = reason
			korder[++nknown] = name
		}
		close(known)
	}
}
# The output of a failed test (the "  | " lines of /init), for the report.
/^  \| / { outbuf[++nout] = $0; next }
/^selftest: (stock|ours) [^ ]+ rc=[0-9]+/ {
	mods = $2; t = $3
	out[mods, t] = ""
	for (i = (nout > 12 ? nout - 11 : 1); i <= nout; i++)
		out[mods, t] = out[mods, t] "\n  " outbuf[i]
	nout = 0
	rc = $4; sub(/^rc=/, "", rc)
	secs = $5; sub(/^secs=/, "", secs)
	if (!(t in seen)) {
		seen[t] = 1
		order[++ntests] = t
	}
	res[mods, t] = result(rc + 0)
	time[mods, t] = secs
	next
}
# check_dmesg in /init, right after the test it names.
/^FAIL: kernel log splat after selftest (stock|ours) / {
	split($0, w, " ")
	mods = w[7]; t = w[8]
	res[mods, t] = "splat"
	next
}
/^FAIL: / { other[++nother] = $0; next }
/^@@DONE/ { done = 1 }
END {
	if (!done)
		other[++nother] = "FAIL: the guest did not finish (no @@DONE: panic, hang or VM timeout)"

	printf "%-40s %-12s %-12s %s\n", "selftest", "stock", "ours", "verdict"
	for (i = 1; i <= ntests; i++) {
		t = order[i]
		s = ((("stock", t) in res) ? res["stock", t] : "missing")
		o = ((("ours", t) in res) ? res["ours", t] : "missing")
		if (splats_fail && (s == "splat" || o == "splat")) {
			verdict = "KERNEL LOG REPORT"
			splat[++nsplat] = t " (stock " s ", ours " o ")"
			failed++
		} else if (s == "pass" && o == "pass") {
			verdict = "ok"
			passed++
		} else if (s == "pass") {
			verdict = "REGRESSION"
			regress[++nregress] = t " (stock pass, ours " o ")"
			rname[nregress] = t
			failed++
		} else {
			verdict = "not comparable (stock " s ")"
			skipped++
			if (s != "skip") {
				stockbad[++nstockbad] = t " (stock " s ", ours " o ")"
				sbname[nstockbad] = t
			}
		}
		if (t in kreason)
			verdict = verdict ", listed in tcg-known-failures.txt but was run"
		st = (("stock", t) in time) ? " " time["stock", t] "s" : ""
		ot = (("ours", t) in time) ? " " time["ours", t] "s" : ""
		printf "%-40s %-12s %-12s %s\n", t, s st, o ot, verdict
	}
	if (ntests == 0) {
		other[++nother] = "FAIL: no selftest ran"
	}

	if (nstockbad)
		listing("Failing or timing out even on stock (not in tcg-known-failures.txt):",
			nstockbad, stockbad, sbname, "stock")
	if (nknown) {
		print ""
		print "Not run (tcg-known-failures.txt, fail or too slow even on stock under TCG):"
		for (i = 1; i <= nknown; i++) {
			t = korder[i]
			if (t in seen)
				continue
			printf "  %-38s %s\n", t, kreason[t]
			skipped++
		}
	}
	if (nsplat) {
		print ""
		print "KERNEL LOG REPORTS (a checker fired right after the test):"
		for (i = 1; i <= nsplat; i++)
			print "  " splat[i]
	}
	if (nregress)
		listing("REGRESSIONS (pass on stock, not on ours):",
			nregress, regress, rname, "ours")
	if (nother) {
		print ""
		for (i = 1; i <= nother; i++)
			print other[i]
		failed += nother
	}
	printf "selftests: %d passed, %d failed, %d skipped\n",
		passed, failed, skipped
	exit(failed ? 1 : 0)
}'
