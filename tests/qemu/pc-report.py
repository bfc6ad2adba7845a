#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The table of make qemu-postcopy: medians per arm of the @@QEMUPC lines
of tests/qemu/qemu_postcopy, and the @@QEMUCLI phases of qemu_cli.

    pc-report.py LOG [--command "make ..."] > table.md
"""
import argparse
import re
import statistics

COLS = [
    ("postcopy_ms", "switchover to completed, ms"),
    ("total_ms", "total-time, ms"),
    ("postcopy_requests", "postcopy requests"),
    ("pf_taken", "dst guest faults (pf_taken)"),
    ("pf_fixed", "dst pf_fixed"),
    ("prefetch_windows", "dst windows"),
    ("prefetch_mapped", "dst pages prefetched"),
    ("dst_passes", "passes during postcopy"),
    ("straddle_s", "pass across the switchover, s"),
]


def median(vals):
    vals = [float(v) for v in vals if re.fullmatch(r"[0-9.]+", v)]
    if not vals:
        return "-"
    m = statistics.median(vals)
    return f"{m:.1f}" if m != int(m) or any(v != int(v) for v in vals) else str(int(m))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--command", default="")
    a = ap.parse_args()
    runs, cli, arms = {}, [], []
    for line in open(a.log, errors="replace"):
        line = line.strip().replace("\r", "")
        if line.startswith("@@QEMUPC "):
            f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
            if f["arm"] not in runs:
                arms.append(f["arm"])
                runs[f["arm"]] = []
            runs[f["arm"]].append(f)
        elif line.startswith("@@QEMUCLI "):
            cli.append(line[len("@@QEMUCLI "):])
    if a.command:
        print("    " + a.command + "\n")
    print("| arm | runs ok, data intact | " + " | ".join(c[1] for c in COLS) + " |")
    print("|---" * (len(COLS) + 2) + "|")
    for arm in arms:
        rs = runs[arm]
        ok = [r for r in rs if r["result"] == "ok"]
        cells = [median([r.get(c[0], "-") for r in ok]) for c in COLS]
        print(f"| {arm} | {len(ok)} of {len(rs)} | " + " | ".join(cells) + " |")
    print()
    print("Per run (pf_taken_done: destination guest faults when the migration completed):\n")
    print("| arm | run | result | postcopy ms | requests | pf_taken | pf_taken_done | windows | prefetched | passes during postcopy |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for arm in arms:
        for r in runs[arm]:
            print(f"| {arm} | {r['run']} | {r['result']} | {r['postcopy_ms']} | {r['postcopy_requests']} | "
                  f"{r['pf_taken']} | {r['pf_taken_done']} | {r['prefetch_windows']} | "
                  f"{r['prefetch_mapped']} | {r['dst_passes']} |")
    if cli:
        print("\nkvm-prefetch set --pid on a running QEMU guest (qemu_cli):\n")
        for c in cli:
            print("    " + c)


if __name__ == "__main__":
    main()
