#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sparse over the patched KVM build and over the unpatched one, each in a
# copy of its tree so that the main build's objects stay untouched.  Fails
# on any sparse warning or error in our own files, and on any (file,
# message) the patched build reports that the unpatched one does not;
# line and column numbers are ignored, so Debian's existing warnings do
# not count however our patches move them.  Prints PASS:/FAIL: lines, one
# per checked file, and ends with "sparse: N passed, N failed".
#
# IN_ROOT (environment, the Makefile's): the command kbuild runs under
# for a base built in a build root (7.3: "scripts/in-root.sh <root>",
# whose sparse then checks; <kernel headers> is a path in that root);
# empty: kbuild and sparse run on the host.
#
# Usage: run-sparse.sh <kernel headers> <patched tree> <pristine tree>
#			<Kbuild.oot> <work dir>

set -u
KHEADERS=$1
TREE=$2
PRISTINE=$3
KBUILD_OOT=$4
WORK=$5
JOBS=$(nproc)
# IN_ROOT is a command and its arguments, split at blanks.
read -r -a in_root <<< "${IN_ROOT:-}"
# The headers as seen from here (inside the root for 7.3).
KHEADERS_DIR=${KHEADERS_DIR:-$KHEADERS}
SCRIPTS=$(cd "$(dirname "$0")/../scripts" && pwd)
# Our files, at their paths in the tree.
OURS=$(cd "$SCRIPTS/.." && scripts/layout.sh kvm-sources | cut -d' ' -f2) ||
	exit 2

mkdir -p "$WORK/sparse-logs"
WORK=$(cd "$WORK" && pwd)
LOGS=$WORK/sparse-logs

# Copy the sources only: the copy keeps its own objects, so a second run
# rebuilds just what changed (C=2 checks every file regardless).
sync_tree() {
	mkdir -p "$2"
	rsync -a --delete --exclude='*.o' --exclude='*.ko' --exclude='*.mod' \
		--exclude='*.mod.c' --exclude='.*.cmd' --exclude='*.a' \
		--exclude='modules.order' --exclude='Module.symvers' \
		--exclude='.tmp*' \
		"$1/arch" "$1/include" "$1/virt" "$2/"
}

# Run sparse through kbuild over the tree $WORK/$1; logs to $LOGS/$1.*.
check_tree() {
	"${in_root[@]}" make -C "$KHEADERS" M="$WORK/$1/arch/x86/kvm" C=2 CHECK=sparse \
		CF=-fmax-warnings=unlimited -j"$JOBS" modules \
		> "$LOGS/$1.out" 2> "$LOGS/$1.err"
}

# "file: warning: message" for each sparse diagnostic, the file relative
# to the tree $WORK/$1 (or to the headers package), without line and
# column.
normalise() {
	python3 - "$WORK/$1" "$KHEADERS" "$LOGS/$1.err" <<'PY'
import os, re, sys
tree, headers, log = sys.argv[1:]
common = os.path.realpath(headers).replace("-amd64", "-common")
diag = re.compile(r"^(.+?):\d+:\d+: (warning|error): (.*)$")
for line in open(log, errors="replace"):
    m = diag.match(line.rstrip("\n"))
    if not m:
        continue
    path = os.path.normpath(m.group(1))
    for root, name in ((tree, ""), (headers, "<headers>"), (common, "<headers>")):
        if path.startswith(root + "/"):
            path = os.path.join(name, os.path.relpath(path, root))
            break
    print("%s: %s: %s" % (path, m.group(2), m.group(3)))
PY
}

# ---- build both copies ------------------------------------------------
fail=0
pass=0
sync_tree "$TREE" "$WORK/sparse-patched"
sync_tree "$PRISTINE" "$WORK/sparse-pristine"
# The unpatched tree gets the Kbuild the Makefile's "modules" recipe
# writes (the patched one has it from there).
"$SCRIPTS/write-kbuild.sh" "$KBUILD_OOT" \
	"$WORK/sparse-pristine/arch/x86/kvm/Makefile" \
	> "$WORK/sparse-pristine/arch/x86/kvm/Kbuild" || exit 2

# Kernels whose kbuild validates the checker first (7.3: sparse must
# parse __typeof_unqual__) build unchecked if it cannot.  Debian's sparse
# (0.6.4, in Debian 12 and 13 alike) cannot: ask it that question first
# and skip at once, instead of building both trees for nothing.
probe=$WORK/sparse-probe.c
printf 'static inline int u(const int *q)\n{\n\t__typeof_unqual__(*q) v = *q;\n\treturn v;\n}\n' > "$probe"
if grep -qs 'checker-valid' "$KHEADERS_DIR"/Makefile "$KHEADERS_DIR"/../linux-headers-*-common/Makefile &&
   sparse "$probe" 2>&1 | grep -q error; then
	echo "SKIP: sparse: sparse $(sparse --version 2>/dev/null) cannot parse __typeof_unqual__, which this kernel's kbuild requires of its checker"
	echo "sparse: 0 passed, 0 failed, 1 skipped"
	exit 0
fi

for t in sparse-patched sparse-pristine; do
	if ! check_tree "$t"; then
		echo "FAIL: sparse: the build of $t failed (see $LOGS/$t.err):"
		grep -E 'error|Error' "$LOGS/$t.err" | head -20 | sed 's/^/  /'
		echo "sparse: $pass passed, 1 failed"
		exit 1
	fi
	# Since 6.x kbuild runs the checker only if it parses the kernel's
	# headers (scripts/checker-valid.sh), else it warns and builds
	# unchecked: that is no pass.  Where the newest sparse Debian has
	# cannot parse the base's headers at all (7.3's __typeof_unqual__,
	# sparse 0.6.4 in Debian 12 and 13 alike), nothing can be checked:
	# that is a skip, said with kbuild's own words.
	if grep -q 'specified, but .* is not available or not up to date' "$LOGS/$t.err"; then
		echo "SKIP: sparse: kbuild refuses this sparse for the base's headers ($t):"
		grep -E 'checker-valid|not available or not up to date' "$LOGS/$t.err" |
			head -5 | sed 's/^/  /'
		echo "sparse: $pass passed, 0 failed, 1 skipped"
		exit 0
	fi
	if ! grep -q '^ *CHECK ' "$LOGS/$t.out"; then
		echo "FAIL: sparse: kbuild ran no checker over $t"
		echo "sparse: $pass passed, 1 failed"
		exit 1
	fi
	normalise "$t" | LC_ALL=C sort > "$LOGS/$t.warnings"
done

# ---- compare ----------------------------------------------------------
# New: a (file, message) of the patched build that the unpatched one does
# not have.  Headers are compared as sets (a new .c file that includes
# kvm_host.h repeats its old warnings), .c files as multisets.
python3 - "$LOGS" "$OURS" <<'PY' > "$LOGS/new"
import collections, sys
logs, ours = sys.argv[1], set(sys.argv[2].split())
def load(name):
    return collections.Counter(open("%s/%s.warnings" % (logs, name)).read().splitlines())
new, old = load("sparse-patched"), load("sparse-pristine")
for w, n in sorted(new.items()):
    path = w.split(": ", 1)[0]
    if path in ours:
        extra = n
    elif path.endswith(".h"):
        extra = 0 if w in old else 1
    else:
        extra = n - old.get(w, 0)
    for _ in range(max(extra, 0)):
        print(w)
PY

checked=$(sed -n 's|^ *CHECK *||p' "$LOGS/sparse-patched.out" |
	python3 -c 'import os, sys
root = sys.argv[1]
for p in sys.stdin:
    print(os.path.relpath(os.path.normpath(p.strip()), root))' \
	"$WORK/sparse-patched" | LC_ALL=C sort -u)
seen=""
for f in $checked $(cut -d: -f1 "$LOGS/new" | sort -u); do
	case " $seen " in *" $f "*) continue ;; esac
	seen="$seen $f"
	if grep -q "^$f: " "$LOGS/new"; then
		echo "FAIL: sparse $f"
		grep "^$f: " "$LOGS/new" | sed 's/^/  /'
		fail=$((fail + 1))
	else
		echo "PASS: sparse $f"
		pass=$((pass + 1))
	fi
done
echo "sparse: $(wc -l < "$LOGS/sparse-pristine.warnings") warnings in" \
	"the unpatched build, $(wc -l < "$LOGS/sparse-patched.warnings") in" \
	"the patched one, $(wc -l < "$LOGS/new") new or in our files"
echo "sparse: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
