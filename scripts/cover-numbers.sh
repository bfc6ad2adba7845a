#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The numbers paragraph of the cover letter, from the results committed
# for the base: the restore benchmark of the irqchip guest
# (tests/bench/results/<base>/irqchip/results.csv) and the instruction
# counts of the batched engine (tests/cost/results/<base>/batch/
# results.csv).  scripts/make-patches.sh puts it where the cover letter
# text (sysfs-docs/cover-letter.txt) says @@NUMBERS@@, so that the cover
# letter always gives the numbers the repository holds (or says that it
# holds none for the base).
#
# Usage: cover-numbers.sh <base>

set -eo pipefail
[ $# -eq 1 ] || { echo "usage: $0 <base>" >&2; exit 2; }
base=$1
bench=tests/bench/results/$base/irqchip
cost=tests/cost/results/$base/batch/results.csv
# A base with no results at all (a new one, 7.3 until its first "make
# bench" and "make cost"): the cover letter says so, rather than give
# another base's numbers as its own.  Some of them only: an error.
if [ ! -e "tests/bench/results/$base" ] && [ ! -e "tests/cost/results/$base" ]; then
	echo "cover-numbers: no results committed for $base (tests/bench/results/$base," \
		"tests/cost/results/$base): the cover letter says so" >&2
	fmt -w 72 <<TEXT | sed 's/~/ /g'
No measurements on $base are committed yet: the restore benchmark (make
bench~KERNEL=$base) and the instruction counts (make cost~KERNEL=$base)
of this base have not been run.  The other bases' numbers and their
method are in tests/bench/results/, tests/cost/results/ and
sysfs-docs/benchmark.rst in the project tree.
TEXT
	exit 0
fi
for f in "$bench/results.csv" "$bench/results.md" "$cost"; do
	[ -f "$f" ] || { echo "cover-numbers: no $f" >&2; exit 1; }
done
date=$(sed -n 's/^- date: \([0-9-]*\).*/\1/p' "$bench/results.md" | head -n1)

# field <csv> <column name>: the column's index.
col() {
	head -n1 "$1" | tr ',' '\n' | grep -nx "$2" | cut -d: -f1
}
# restore <copy|zc>: "-A/-B/-C" (normalized time against stock, %, per
# chunk size in the order of the file) and the largest faults per chunk.
restore() {
	awk -F, -v r="$1" -v norm="$(col "$bench/results.csv" norm_vs_stock_pct)" \
	    -v fpc="$(col "$bench/results.csv" faults_per_chunk)" \
	    -v kib="$(col "$bench/results.csv" chunk_kib)" '
		NR > 1 && $2 == r && $4 == "auto-C" {
			out = out (out == "" ? "" : "/") sprintf("%+.0f", $norm)
			sizes = sizes (sizes == "" ? "" : "/") ($kib >= 1024 ? $kib / 1024 "~MiB" : $kib "~KiB")
			if ($fpc > worst) worst = $fpc
		}
		END { printf "%s|%s|%.2f\n", out, sizes, worst }' "$bench/results.csv"
}
# insns <config> <column>: the value of the first boot.
insns() {
	awk -F, -v c="$1" -v k="$(col "$cost" "$2")" \
		'NR > 1 && $1 == c { printf "%.0f", $k; exit }' "$cost"
}
IFS='|' read -r copy sizes fpc_copy < <(restore copy)
IFS='|' read -r zc _ fpc_zc < <(restore zc)
[ -n "$copy" ] && [ -n "$zc" ] || {
	echo "cover-numbers: no auto-C rows in $bench/results.csv" >&2
	exit 1
}
stock=$(insns stock kvm_insns_per_fault)
none=$(insns none kvm_insns_per_fault)
p8=$(insns auto-8 kvm_insns_per_prefetched_page)
p512=$(insns auto-512 kvm_insns_per_prefetched_page)
[ -n "$stock" ] && [ -n "$none" ] && [ -n "$p8" ] && [ -n "$p512" ] || {
	echo "cover-numbers: missing rows in $cost" >&2
	exit 1
}
fpc=$(printf '%s\n%s\n' "$fpc_copy" "$fpc_zc" | sort -n | tail -n1)
delta=$((none - stock))
pct=$(awk -v d="$delta" -v s="$stock" 'BEGIN { printf "%+.1f", 100 * d / s }')
if [ "$delta" -ge 0 ]; then
	more="$delta~more"
else
	more="$((-delta))~fewer"
fi

fmt -w 72 <<TEXT | sed 's/~/ /g'
Restoring 64 MiB through a userfaultfd handler that populates C-byte
chunks, into a guest with the in-kernel irqchip, nested under QEMU TCG
(L1: Debian's $base with these modules, emulated SVM with NPT), with
auto and nr_pages = C/4K, against the stock modules (normalized time
of the guest's pass, $sizes chunks, $date): $copy% with UFFDIO_COPY,
$zc% zero-copy (a shared memfd, MINOR mode and UFFDIO_CONTINUE); the
guest takes at most $fpc faults per chunk.  Cost, counted in
instructions of kvm.ko and kvm-amd.ko (make cost): with policy none a
guest fault takes $more than with the stock modules ($pct%); a
prefetched page costs $p8 (window of 8 pages) or $p512 (512 pages).
Numbers and method: tests/bench/results/$base/, tests/cost/results/$base/
and sysfs-docs/benchmark.rst in the project tree.
TEXT
