#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The per-arm table of qemu_guests' @@QEMU lines (tests/qemu/).

usage: guests-report.py LOG... [--lines OUT]

Each LOG is a test VM's console log (build/qemu-rig/test.log or its
.clean); the "qemu_guests: ... thp=<x> ..." line before a run's @@QEMU
lines says which THP setting they ran with.  Prints a markdown table per
THP setting and workload: boots ok of all, medians of the boot to
userspace, the whole run, guest faults, windows and pages prefetched
(of the boots that finished ok).  The header line also names the guest
kernel (kernel=bzimage|pvh).  Lines with an l1= (the L1 VMM: 7.2 or
current, tests/qemu/qemu_guests) get a row per arm and L1.  --lines writes the raw @@QEMU lines, each
prefixed with its thp= and kernel=, to OUT.
"""
import re
import statistics
import sys


def median(xs):
    return statistics.median(xs) if xs else None


def fmt(x, digits=0):
    if x is None:
        return "-"
    return f"{x:.{digits}f}"


def main(argv):
    logs, out = [], None
    while argv:
        a = argv.pop(0)
        if a == "--lines":
            out = argv.pop(0)
        else:
            logs.append(a)
    rows, order, raw = {}, [], []
    for path in logs:
        thp, kernel = "never", "bzimage"
        with open(path, errors="replace") as f:
            for line in f:
                line = line.replace("\r", "").rstrip("\n")
                m = re.search(r"^qemu_guests: .* thp=(\S+)", line)
                if m:
                    thp = m.group(1)
                    m = re.search(r" kernel=(\S+)", line)
                    kernel = m.group(1) if m else "bzimage"
                if not line.startswith("@@QEMU "):
                    continue
                kv = dict(w.split("=", 1) for w in line.split()[1:] if "=" in w)
                key = (thp, kernel, kv.get("work", "64:3"), kv["arm"], kv.get("l1"))
                if key not in rows:
                    rows[key] = []
                    order.append(key)
                rows[key].append(kv)
                raw.append(f"thp={thp} kernel={kernel} {line}")
    if out:
        with open(out, "w") as f:
            f.write("\n".join(raw) + "\n")

    def num(kv, k):
        try:
            return float(kv[k])
        except (KeyError, ValueError):
            return None

    has_l1 = any(k[4] for k in order)
    groups = []
    for key in order:
        g = key[:3]
        if g not in groups:
            groups.append(g)
    for thp, kernel, work in groups:
        print(f"THP {thp} in the test VM, guest kernel {kernel}, "
              f"l2work {work.replace(':', ' MiB x ')} pass(es):\n")
        print("| arm |" + (" L1 |" if has_l1 else "") + " boots ok | boot to userspace, s (median) | whole run, s (median) "
              "| guest faults (median) | windows (median) | pages prefetched (median) | not ok |")
        print("|---|---|---|---|---|---|---|---|" + ("---|" if has_l1 else ""))
        for key in order:
            if key[:3] != (thp, kernel, work):
                continue
            runs = rows[key]
            ok = [r for r in runs if r.get("result") == "ok"]
            bad = [f"run {r.get('run')}: {r.get('result')}" for r in runs if r.get("result") != "ok"]
            vals = {k: [v for v in (num(r, k) for r in ok) if v is not None]
                    for k in ("l2up", "secs", "pf_taken", "prefetch_windows", "prefetch_mapped")}
            stock = key[3] == "stock"
            l1 = f" {key[4] or '7.2'} |" if has_l1 else ""
            print(f"| {key[3]} |{l1} {len(ok)} of {len(runs)} | {fmt(median(vals['l2up']), 1)} "
                  f"| {fmt(median(vals['secs']), 1)} | {fmt(median(vals['pf_taken']))} "
                  f"| {'-' if stock else fmt(median(vals['prefetch_windows']))} "
                  f"| {'-' if stock else fmt(median(vals['prefetch_mapped']))} "
                  f"| {', '.join(bad) or '-'} |")
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
