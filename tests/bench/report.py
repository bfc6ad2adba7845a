#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the serial log of "make bench" into results.md, .csv and .png.

The guest program (tests/bench/bench.c) prints one line per run:

  @@BENCH kind=uffd cfg=auto-C mods=ours policy=auto nr=16 gup=nofault
          chunk=65536 mib=64 vcpus=1 run=3 ms=.. limit_ms=.. pages=..
          chunks=.. events=.. dup=.. pf=.. pf2=.. windows=.. mapped=.. ok=1

plus @@BENCHCFG (its parameters) and @@BENCHENV (the guest).  Runs with
ok=0 (a wrong page, a handler error) are errors and never enter a number.
Standard library only; the plot is drawn by gnuplot.
"""
import csv
import datetime
import os
import platform
import re
import statistics
import sys

import reportlib

LABELS = {
    "stock": "stock modules",
    "none": "none",
    "auto-8": "auto nr=8",
    "auto-C": "auto nr=C/4K",
    "auto-C-fast": "auto nr=C/4K gup=fast",
    "auto-512": "auto nr=512",
    "auto-512-fast": "auto nr=512 gup=fast",
    "async-C": "async nr=C/4K",
    "manual-C": "manual nr=C/4K",
    "adaptive-512": "adaptive nr=512",
    "adaptive": "adaptive nr=0 (untuned)",
}
SECTION_TITLES = {
    "irqchip": "irqchip guest (in-kernel irqchip, IF=1)",
    "pv-apf": "pv-apf guest (irqchip + PV async page faults)",
    "plain": "plain guest (no irqchip, IF=0)",
}
ORDER = ["stock", "none", "auto-8", "auto-C", "auto-C-fast", "auto-512",
         "async-C", "manual-C", "adaptive", "adaptive-512"]


COLORS = ["#e41a1c", "#377eb8", "#4daf4a", "#984ea3", "#ff7f00", "#a65628",
          "#f781bf", "#17becf", "#bcbd22", "#1b9e77", "#7570b3"]


def label(cfg):
    if cfg in LABELS:
        return LABELS[cfg]
    m = re.match(r"(.*)-(\d+)$", cfg)
    return f"{m.group(1)} nr={m.group(2)}" if m else cfg


def order_key(cfg):
    return (ORDER.index(cfg) if cfg in ORDER else len(ORDER), cfg)


def kib(chunk):
    c = chunk // 1024
    return f"{c // 1024} MiB" if c >= 1024 and c % 1024 == 0 else f"{c} KiB"


def num(v):
    return None if v == "-" else float(v)


def parse(path):
    runs, cfg, env, fails = [], {}, {}, []
    with open(path, "rb") as f:
        for raw in f:
            line = raw.decode("utf-8", "replace").replace("\r", "").rstrip("\n")
            # The serial console may glue a kernel message to a line.
            i = line.find("@@BENCH")
            if line.startswith("FAIL: "):
                fails.append(line)
            if i < 0:
                continue
            kv = dict(t.split("=", 1) for t in line[i:].split()[1:] if "=" in t)
            tag = line[i:].split()[0]
            if tag == "@@BENCH":
                runs.append(kv)
            elif tag == "@@BENCHCFG":
                cfg = kv
            elif tag == "@@BENCHENV":
                env = kv
    return runs, cfg, env, fails


class Group:
    """All runs of one (kind, cfg, chunk, mib, vcpus)."""

    def __init__(self, key):
        self.kind, self.cfg, self.chunk, self.mib, self.vcpus = key
        self.ok, self.bad = [], []

    def add(self, r):
        (self.ok if r["ok"] == "1" else self.bad).append(r)

    def vals(self, k):
        return [num(r.get(k, "-")) for r in self.ok if num(r.get(k, "-")) is not None]

    def med(self, k):
        v = self.vals(k)
        return statistics.median(v) if v else None

    def span(self, k):
        v = self.vals(k)
        return (min(v), max(v)) if v else (None, None)

    @property
    def n(self):
        return len(self.ok)


def fmt(v, spec=".1f", none="-"):
    return none if v is None else format(v, spec)


def usage(g):
    """Precision and coverage (percent) of a group's median run, or None.

    precision = used / (used + unused + untouched) at the end of the pass:
    a page still untouched then is one the pass did not use; coverage =
    avoided / (avoided + pf_taken)."""
    u, n, t, a, pf = (g.med(k) for k in ("used", "unused", "untouched", "avoided", "pf"))
    if u is None or n is None or t is None:
        return None, None
    prec = 100.0 * u / (u + n + t) if u + n + t else None
    cov = 100.0 * a / (a + pf) if a is not None and pf is not None and a + pf else None
    return prec, cov


def fmt_count(g, k):
    lo, hi = g.span(k)
    if lo is None:
        return "-"
    if lo == hi:
        return f"{lo:.0f}"
    return f"{g.med(k):.0f} ({lo:.0f}-{hi:.0f})"


def pct(a, b):
    return None if a is None or not b else (a / b - 1) * 100


def machine(args):
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(),
        "cpu": model,
        "host_kernel": platform.release(),
        "qemu": args.qemu or "?",
        "abi": args.abi or "?",
    }


def section(runs, bcfg, args, md, rows, sec_title, png):
    """Tables of one guest mode and restore method; returns True on errors."""
    w = md.append
    w(f"## {sec_title}\n")
    first = len(rows)
    # Normalized time of a uffd run: its time in units of its own handler
    # copy cost (CPU time in UFFDIO_COPY, the same work in every
    # configuration at a chunk size), times the median copy cost of all
    # runs at that chunk size.  Under TCG the emulation speed differs from
    # run to run by up to +-30%, uniformly for the handler and the guest;
    # this cancels it (see the "Noise" section of the report).
    ref_copy = {}
    for r in runs:
        if r["kind"] == "uffd" and r["ok"] == "1" and num(r.get("copy_ms", "-")):
            ref_copy.setdefault(int(r["chunk"]), []).append(num(r["copy_ms"]))
    ref_copy = {c: statistics.median(v) for c, v in ref_copy.items()}
    for r in runs:
        cp = num(r.get("copy_ms", "-"))
        if r["kind"] == "uffd" and cp and int(r["chunk"]) in ref_copy:
            r["norm_ms"] = str(num(r["ms"]) / cp * ref_copy[int(r["chunk"])])

    groups = {}
    for r in runs:
        key = (r["kind"], r["cfg"], int(r["chunk"]), int(r["mib"]), int(r["vcpus"]))
        groups.setdefault(key, Group(key)).add(r)

    uffd = {(g.cfg, g.chunk): g for g in groups.values()
            if g.kind == "uffd" and g.vcpus == 1}
    chunks = sorted({c for _, c in uffd})
    cfgs = sorted({c for c, _ in uffd}, key=order_key)
    mib_of = {c: uffd[next(k for k in uffd if k[1] == c)].mib for c in chunks}

    # The limit at each chunk size: the second pass of every run there.
    limit = {}
    for c in chunks:
        v = [x for (cf, ch), g in uffd.items() if ch == c for x in g.vals("limit_ms")]
        limit[c] = (statistics.median(v), min(v), max(v)) if v else (None, None, None)

    def stock(c):
        g = uffd.get(("stock", c))
        return g.med("ms") if g else None

    def nstock(c):
        g = uffd.get(("stock", c))
        return g.med("norm_ms") if g else None

    def rest(cf, c):
        """Median over runs of (time - handler copy time)."""
        g = uffd.get((cf, c))
        if not g:
            return None
        v = [num(r["ms"]) - num(r["copy_ms"]) for r in g.ok
             if num(r.get("copy_ms", "-")) is not None]
        return statistics.median(v) if v else None

    # ---- summary matrix
    w("### Median time of the pass (ms)\n")
    hdr = "| configuration | " + " | ".join(
        f"{kib(c)}" + (f" ({mib_of[c]} MiB)" if mib_of[c] != int(bcfg.get("mib", 0) or 0) else "")
        for c in chunks) + " |"

    def matrix(cell):
        """One row per configuration, cell(group or None) per chunk size."""
        w(hdr)
        w("|---" * (len(chunks) + 1) + "|")
        for cf in cfgs:
            w(f"| {label(cf)} | " + " | ".join(cell(uffd.get((cf, c))) for c in chunks)
              + " |")

    matrix(lambda g: fmt(g.med("ms") if g else None, ".0f"))
    w("| limit (2nd pass) | " + " | ".join(fmt(limit[c][0], ".1f") for c in chunks) + " |")
    w("")
    if ref_copy:
        w("### Median normalized time of the pass (ms)\n")
        w(hdr)
        w("|---" * (len(chunks) + 1) + "|")
        for cf in cfgs:
            w(f"| {label(cf)} | " + " | ".join(
                fmt(uffd[(cf, c)].med("norm_ms") if (cf, c) in uffd else None, ".0f")
                for c in chunks) + " |")
        w("")
    for key, title in (("ms", "Change against stock (median of the raw times)"),
                       ("norm_ms", "Change against stock (median of the normalized times)")):
        if key == "norm_ms" and not ref_copy:
            continue
        w(f"### {title}\n")
        if key == "norm_ms":
            w("Normalized time = time x (median handler copy time at this C) / (this "
              "run's handler copy time): the run's time at the common emulation "
              "speed. See \"Noise\" below for why.\n")
        w(hdr)
        w("|---" * (len(chunks) + 1) + "|")
        for cf in cfgs:
            if cf == "stock":
                continue
            cells = []
            for c in chunks:
                g, gs = uffd.get((cf, c)), uffd.get(("stock", c))
                cells.append(fmt(pct(g.med(key) if g else None, gs.med(key) if gs else None),
                                 "+.1f") + ("%" if g and gs and gs.med(key) else ""))
            w(f"| {label(cf)} | " + " | ".join(cells) + " |")
        w("")

    # ---- faults per chunk (the 8 KiB column is upstream's failing case)
    w("### Guest faults per chunk (pf_taken / chunks, median; target 1.00 where the "
      "window covers the chunk)\n")

    def per_chunk(g):
        pf, ch = (g.med("pf"), g.med("chunks")) if g else (None, None)
        return fmt(pf / ch if pf is not None and ch else None, ".2f")

    matrix(per_chunk)
    w("")

    # ---- noise
    if ref_copy:
        w("### Noise\n")
        w("Identical work (same configuration, same chunk size) runs at different "
          "speeds from run to run under TCG. The spread (max/min - 1) of the raw "
          "times against that of the time divided by the run's own handler copy "
          "time shows the slowdown is uniform within a run:\n")
        w("| configuration | C | runs | spread of time | spread of time / copy time |")
        w("|---" * 5 + "|")
        for cf in ("stock", "none"):
            for c in chunks:
                g = uffd.get((cf, c))
                if not g or g.n < 2:
                    continue
                t = g.vals("ms")
                q = [num(r["ms"]) / num(r["copy_ms"]) for r in g.ok
                     if num(r.get("copy_ms", "-"))]
                if len(q) < 2:
                    continue
                w(f"| {label(cf)} | {kib(c)} | {g.n} | {(max(t) / min(t) - 1) * 100:.0f}% | "
                  f"{(max(q) / min(q) - 1) * 100:.0f}% |")
        w("")
        # Order within a round: none against stock when stock ran first
        # (odd rounds) and when ours ran first (even rounds).
        cells = []
        for c in chunks:
            gs, gn = uffd.get(("stock", c)), uffd.get(("none", c))
            if not gs or not gn:
                continue
            out = []
            for par, name in ((1, "stock first"), (0, "ours first")):
                a = [num(r["norm_ms"]) for r in gn.ok if "norm_ms" in r and int(r["run"]) % 2 == par]
                b = [num(r["norm_ms"]) for r in gs.ok if "norm_ms" in r and int(r["run"]) % 2 == par]
                if a and b:
                    out.append(f"{name} {pct(statistics.median(a), statistics.median(b)):+.1f}%")
            if out:
                cells.append(f"{kib(c)}: " + ", ".join(out))
        if cells:
            w("Order effect, `none` against stock (normalized medians) by which ran first "
              "in the round: " + "; ".join(cells) + ".\n")

    # ---- details
    w("### Details\n")
    w("faults/chunk = pf_taken / chunks; cost = (median - limit) / prefetch_mapped; "
      "precision = prefetch_used / (used + unused + untouched) after the pass, coverage = "
      "prefetch_avoided / (avoided + pf_taken) (VM stats, prefetch-api.rst; `-` without them). "
      "copy ms = time the handler spent in UFFDIO_COPY (allocating and copying the "
      "pages; the same work in every configuration); rest = median - copy ms: the "
      "guest faults, the userfaultfd hand-offs and prefetch, which is what a "
      "prefetch policy can reduce.\n")
    w("| C | M | configuration | runs | median ms | min | max | vs stock | norm. ms | "
      "norm. vs stock | copy ms | "
      "rest ms | rest vs stock | UFFD events | pf_taken | faults/chunk | windows | mapped | "
      "cost us/mapped | precision | coverage |")
    w("|---" * 21 + "|")
    for c in chunks:
        for cf in cfgs:
            g = uffd.get((cf, c))
            if not g:
                continue
            med = g.med("ms")
            lo, hi = g.span("ms")
            ch = g.med("chunks")
            pf = g.med("pf")
            mp = g.med("mapped")
            fpc = pf / ch if pf is not None and ch else None
            cost = ((med - limit[c][0]) / mp * 1000
                    if med is not None and mp and limit[c][0] is not None else None)
            runs_s = f"{g.n}" + (f" (+{len(g.bad)} bad)" if g.bad else "")
            cp = g.med("copy_ms")
            w(f"| {kib(c)} | {g.mib} | {label(cf)} | {runs_s} | {fmt(med)} | {fmt(lo)} | "
              f"{fmt(hi)} | {fmt(pct(med, stock(c)), '+.1f')} | {fmt(g.med('norm_ms'))} | "
              f"{fmt(pct(g.med('norm_ms'), nstock(c)), '+.1f')} | {fmt(cp)} | "
              f"{fmt(rest(cf, c))} | {fmt(pct(rest(cf, c), rest('stock', c)), '+.1f')} | "
              f"{fmt_count(g, 'events')} | "
              f"{fmt_count(g, 'pf')} | {fmt(fpc, '.3f')} | {fmt_count(g, 'windows')} | "
              f"{fmt_count(g, 'mapped')} | {fmt(cost, '.1f')} | "
              f"{fmt(usage(g)[0], '.1f')} | {fmt(usage(g)[1], '.1f')} |")
            rows.append(dict(kind="uffd", cfg=cf, label=label(cf), chunk_kib=c // 1024,
                             mib=g.mib, vcpus=1, runs=g.n, errors=len(g.bad),
                             median_ms=med, min_ms=lo, max_ms=hi,
                             limit_ms=limit[c][0], vs_stock_pct=pct(med, stock(c)),
                             norm_ms=g.med("norm_ms"),
                             norm_vs_stock_pct=pct(g.med("norm_ms"), nstock(c)),
                             copy_ms=cp, rest_ms=rest(cf, c),
                             rest_vs_stock_pct=pct(rest(cf, c), rest("stock", c)),
                             events=g.med("events"), dup=g.med("dup"), chunks=ch,
                             pages=g.med("pages"), pf_taken=pf, pf_2nd_pass=g.med("pf2"),
                             windows=g.med("windows"), mapped=mp,
                             faults_per_chunk=fpc, cost_us_per_mapped=cost,
                             precision_pct=usage(g)[0], coverage_pct=usage(g)[1]))
        lm = limit[c]
        w(f"| {kib(c)} | {mib_of[c]} | limit (2nd pass) | | {fmt(lm[0])} | {fmt(lm[1])} | "
          f"{fmt(lm[2])} | | | | | | | | | | | | | | |")
        rows.append(dict(kind="limit", cfg="limit", label="limit (2nd pass)",
                         chunk_kib=c // 1024, mib=mib_of[c], vcpus=1,
                         median_ms=lm[0], min_ms=lm[1], max_ms=lm[2]))
    w("")

    # ---- cost of prefetch on populated memory
    pop = {g.cfg: g for g in groups.values() if g.kind == "populated"}
    costs = {}
    if pop:
        w("### Cost of a guest fault and of prefetch (memory populated up front, no userfaultfd)\n")
        w("per fault = (median - limit) / pf_taken of `none`; prefetch per mapped page = "
          "(median - limit - pf_taken x per fault) / prefetch_mapped.\n")
        w("| configuration | M | runs | median ms | min | max | limit ms | pf_taken | mapped | "
          "us per fault | us per mapped page |")
        w("|---" * 11 + "|")
        per_fault = None
        g0 = pop.get("none")
        if g0 and g0.med("pf"):
            per_fault = (g0.med("ms") - g0.med("limit_ms")) / g0.med("pf") * 1000
        for cf in sorted(pop, key=order_key):
            g = pop[cf]
            med, lim, pf, mp = g.med("ms"), g.med("limit_ms"), g.med("pf"), g.med("mapped")
            pp = None
            if mp and per_fault is not None:
                pp = ((med - lim) * 1000 - pf * per_fault) / mp
                costs[cf] = pp
            lo, hi = g.span("ms")
            w(f"| {label(cf)} | {g.mib} | {g.n} | {fmt(med)} | {fmt(lo)} | {fmt(hi)} | "
              f"{fmt(lim, '.1f')} | {fmt_count(g, 'pf')} | {fmt_count(g, 'mapped')} | "
              f"{fmt(per_fault if cf == 'none' else None, '.1f')} | {fmt(pp, '.2f')} |")
            rows.append(dict(kind="populated", cfg=cf, label=label(cf), chunk_kib=0,
                             mib=g.mib, vcpus=1, runs=g.n, errors=len(g.bad),
                             median_ms=med, min_ms=lo, max_ms=hi, limit_ms=lim,
                             pf_taken=pf, windows=g.med("windows"), mapped=mp,
                             cost_us_per_mapped=pp))
        w("")

    # ---- multi-vCPU
    multi = {(g.cfg, g.chunk, g.vcpus): g for g in groups.values() if g.kind == "multi"}
    if multi:
        nv = max(v for _, _, v in multi)
        w(f"### Multi-vCPU: {nv} vCPUs on disjoint parts vs 1 vCPU (threads not pinned)\n")
        w(f"| C | M | configuration | 1 vCPU ms (min-max) | {nv} vCPUs ms (min-max) | "
          f"speedup | pf_taken ({nv} vCPUs) | chunks | UFFD events |")
        w("|---" * 9 + "|")
        for c in sorted({k[1] for k in multi}):
            for cf in sorted({k[0] for k in multi if k[1] == c}, key=order_key):
                g1, g4 = multi.get((cf, c, 1)), multi.get((cf, c, nv))
                if not g1 or not g4:
                    continue
                sp = g1.med("ms") / g4.med("ms") if g4.med("ms") else None
                w(f"| {kib(c)} | {g4.mib} | {label(cf)} | {fmt(g1.med('ms'))} "
                  f"({fmt(g1.span('ms')[0], '.0f')}-{fmt(g1.span('ms')[1], '.0f')}) | "
                  f"{fmt(g4.med('ms'))} ({fmt(g4.span('ms')[0], '.0f')}-"
                  f"{fmt(g4.span('ms')[1], '.0f')}) | {fmt(sp, '.2f')}x | "
                  f"{fmt_count(g4, 'pf')} | {fmt(g4.med('chunks'), '.0f')} | "
                  f"{fmt_count(g4, 'events')} |")
                for g in (g1, g4):
                    rows.append(dict(kind="multi", cfg=cf, label=label(cf),
                                     chunk_kib=c // 1024, mib=g.mib, vcpus=g.vcpus,
                                     runs=g.n, errors=len(g.bad), median_ms=g.med("ms"),
                                     min_ms=g.span("ms")[0], max_ms=g.span("ms")[1],
                                     limit_ms=g.med("limit_ms"), events=g.med("events"),
                                     chunks=g.med("chunks"), pf_taken=g.med("pf"),
                                     windows=g.med("windows"), mapped=g.med("mapped")))
        w("")

    # ---- random access (issue 8)
    rnd = {g.cfg: g for g in groups.values() if g.kind == "random"}
    if rnd:
        w(f"### Random access: {bcfg.get('random', '?')} distinct pages of "
          f"{next(iter(rnd.values())).mib} MiB, random order (memory populated up front)\n")
        w("The guest writes one page per KVM_RUN, in a shuffled order seeded with the "
          "round (the same pages for every configuration in a round). `mapped` are "
          "pages prefetched; those the guest never touches are wasted work.\n")
        w("| configuration | runs | pf_taken | windows | mapped | mapped per fault | median ms | "
          "precision | coverage |")
        w("|---" * 9 + "|")
        for cf in sorted(rnd, key=order_key):
            g = rnd[cf]
            pf, mp = g.med("pf"), g.med("mapped")
            w(f"| {label(cf)} | {g.n} | {fmt_count(g, 'pf')} | {fmt_count(g, 'windows')} | "
              f"{fmt_count(g, 'mapped')} | {fmt(mp / pf if pf and mp is not None else None, '.2f')} | "
              f"{fmt(g.med('ms'))} | {fmt(usage(g)[0], '.1f')} | {fmt(usage(g)[1], '.1f')} |")
            rows.append(dict(kind="random", cfg=cf, label=label(cf), chunk_kib=0,
                             mib=g.mib, vcpus=1, runs=g.n, errors=len(g.bad),
                             median_ms=g.med("ms"), min_ms=g.span("ms")[0],
                             max_ms=g.span("ms")[1], pages=g.med("pages"),
                             pf_taken=pf, windows=g.med("windows"), mapped=mp,
                             precision_pct=usage(g)[0], coverage_pct=usage(g)[1]))
        w("")

    # ---- targets
    w("### Targets of issue 7\n")
    verdicts = []

    def verdict(name, ok, detail):
        verdicts.append((name, ok))
        w(f"- **{'met' if ok else 'NOT met'}**: {name}. {detail}")

    def vs(cf, c, ref="stock"):
        """(normalized, raw) change of cf against ref at c, in percent."""
        g, gr = uffd.get((cf, c)), uffd.get((ref, c))
        if not g or not gr:
            return None, None
        return pct(g.med("norm_ms"), gr.med("norm_ms")), pct(g.med("ms"), gr.med("ms"))

    def both(p):
        n, r = p
        return (f"{n:+.1f}% (raw {r:+.1f}%)" if n is not None
                else f"raw {r:+.1f}%" if r is not None else "-")

    def judged(p):
        return p[0] if p[0] is not None else p[1]

    w("Times are judged on the medians of the normalized times; the raw medians "
      "are in brackets.\n")
    d, ok = [], True
    for c in chunks:
        gs, gn = uffd.get(("stock", c)), uffd.get(("none", c))
        if not gs or not gn:
            continue
        p = vs("none", c)
        same = set(gs.vals("pf")) == set(gn.vals("pf")) and len(set(gs.vals("pf"))) == 1
        ok &= judged(p) is not None and abs(judged(p)) <= 2 and same
        d.append(f"{kib(c)} {both(p)}{'' if same else ' (pf_taken differs)'}")
    verdict("`none` within 2% of stock (median), pf_taken identical", ok, ", ".join(d))

    d, ok = [], True
    for c in chunks:
        g = uffd.get(("auto-C", c))
        if c < 16384 or not g or not g.med("chunks"):
            continue
        f = max(g.vals("pf")) / g.med("chunks")
        ok &= f <= 1.05
        d.append(f"{kib(c)} {f:.3f}")
    verdict("`auto` nr=C/4K: guest faults per chunk <= 1.05 for C >= 16 KiB (worst run)", ok,
            ", ".join(d))

    d, ok = [], True
    for c in chunks:
        if c < 65536 or ("auto-C", c) not in uffd:
            continue
        p = vs("auto-C", c)
        ok &= judged(p) is not None and judged(p) <= -75
        pr = pct(rest("auto-C", c), rest("stock", c))
        d.append(f"{kib(c)} {both(p)}" +
                 (f", gup=fast {both(vs('auto-C-fast', c))}" if ("auto-C-fast", c) in uffd else "") +
                 (f" [time minus the handler's copy time: {pr:+.1f}%]" if pr is not None else ""))
    verdict("`auto` nr=C/4K at least 75% faster than stock for C >= 64 KiB", ok, "; ".join(d))

    c4 = 4096
    if c4 in chunks and stock(c4):
        worst = [(vs(cf, c4), label(cf)) for cf in cfgs if cf != "stock" and (cf, c4) in uffd]
        ok = all(judged(p) <= 2 for p, _ in worst)
        verdict("at C = 4 KiB no configuration more than 2% slower than stock", ok,
                ", ".join(f"{lb} {both(p)}" for p, lb in worst))

    d = []
    for c in chunks:
        for cf in ("auto-C", "auto-C-fast"):
            r = next((x for x in rows if x.get("kind") == "uffd" and x["cfg"] == cf
                      and x["chunk_kib"] == c // 1024), None)
            if r and r.get("cost_us_per_mapped") is not None and c >= 16384:
                d.append(f"{kib(c)} {'fast' if 'fast' in cf else 'nofault'} "
                         f"{r['cost_us_per_mapped']:.1f}")
    w(f"- cost of prefetch, (time - limit) per mapped page in us (includes the "
      f"userfaultfd round trips and guest faults): {', '.join(d)}")
    if costs:
        w("- cost of prefetch itself per mapped page (populated memory, guest fault "
          "cost taken out): " + ", ".join(f"{label(k)} {v:.2f} us" for k, v in costs.items()))
    w("")

    # ---- issue 8: adaptive against the best fixed auto window
    fixed = ("auto-8", "auto-C", "auto-C-fast", "auto-512")
    # "adaptive" (nr_pages 0) since issue 13; older logs have "adaptive-512"
    ad = next((a for a in ("adaptive", "adaptive-512")
               if any((a, c) in uffd for c in chunks)), None)
    if ad:
        w(f"### Targets of issues 8 and 13 ({label(ad)}, no per-VM tuning)\n")
        d, ok = [], True
        key = "norm_ms" if ref_copy else "ms"
        for c in chunks:
            ga = uffd.get((ad, c))
            best = min(((uffd[(cf, c)].med(key), cf) for cf in fixed if (cf, c) in uffd),
                       default=None)
            if not ga or not best:
                continue
            p = vs(ad, c, best[1])
            ok &= judged(p) <= 10
            d.append(f"{kib(c)} {both(p)} vs {label(best[1])} "
                     f"(faults {ga.med('pf'):.0f} vs {uffd[(best[1], c)].med('pf'):.0f})")
        verdict("`adaptive` within 10% of the best fixed `auto` window at every C (median, "
                "best = lowest normalized median)",
                ok, ", ".join(d))
        if ad in rnd and "auto-8" in rnd:
            ga, g8 = rnd[ad], rnd["auto-8"]
            m8 = {r["run"]: num(r["mapped"]) for r in g8.ok}
            diffs = [num(r["mapped"]) - m8[r["run"]] for r in ga.ok if r["run"] in m8]
            verdict("random access: `adaptive` maps no more pages than `auto` nr=8 (every round)",
                    bool(diffs) and max(diffs) <= 0,
                    f"mapped {fmt_count(ga, 'mapped')} vs {fmt_count(g8, 'mapped')} "
                    f"({len(diffs)} rounds compared)")
        w("")
    for r in rows[first:]:
        r["mode"], r["restore"] = runs[0].get("mode", "plain"), runs[0].get("restore", "copy")
    plot(args.out, uffd, chunks, cfgs, limit, mib_of, "norm_ms" if ref_copy else "ms",
         png, sec_title)
    return any(g.bad for g in groups.values())


def main():
    args = reportlib.parse_args("--log", "--qemu")

    runs, bcfg, env, fails = parse(args.log)
    if not runs:
        print(f"report: no @@BENCH lines in {args.log}", file=sys.stderr)
        return 1
    m = machine(args)
    md = []
    w = md.append
    w("# Restore benchmark (make bench)\n")
    w(f"- date: {m['date']}")
    w(f"- host: {m['nproc']} CPUs, {m['cpu']}, Linux {m['host_kernel']}; {m['qemu']}")
    w(f"- test VM: QEMU TCG `-cpu max -smp 2 -m 2G` (nested SVM + NPT, TDP MMU), "
      f"guest kernel {env.get('guest_kernel', args.abi or '?')} (Debian ABI {m['abi']}), "
      f"{env.get('guest_cpus', '?')} vCPUs; L2 guest: 32-bit flat code (paging only in pv-apf), see the guest modes below")
    w(f"- parameters: {bcfg.get('runs', '?')} rounds in the main table (median, min, max of the runs), "
      f"M = {bcfg.get('mib', '?')} MiB, but {bcfg.get('small_mib', '?')} MiB for chunks <= "
      f"{bcfg.get('small_max', '?')} KiB (each 4 KiB chunk costs a "
      f"userfaultfd round trip plus a nested fault); chunk sizes {bcfg.get('chunks', '?')} KiB")
    w(f"- rounds interleave stock and ours in one boot: in each round, for each chunk "
      f"size, the stock case and all of ours back to back (stock first in odd rounds, "
      f"ours first in even ones, `kvm-reload` in between); vCPU and handler threads "
      f"pinned to CPU {bcfg.get('pin', '?')} except in the multi-vCPU variant")
    if args.vm_seconds:
        w(f"- time in QEMU: {args.vm_seconds} s")
    w(f"- guest modes {bcfg.get('modes', 'plain')} (the first is the main table), "
      f"{bcfg.get('sec_runs', bcfg.get('runs', '?'))} rounds for the other tables; "
      f"zero-copy table: {'yes' if bcfg.get('zc', '0') == '1' else 'no'}")
    w(f"- runs: {sum(r['ok'] == '1' for r in runs)} verified, "
      f"{sum(r['ok'] != '1' for r in runs)} with errors")
    w("")
    w("Workload: the guest writes one dword into every 4 KiB page of M MiB, "
      "linearly, while a userfaultfd handler thread (MISSING mode, "
      "MADV_NOHUGEPAGE) populates C-byte chunks on demand with UFFDIO_COPY "
      "from a source buffer. Time = wall time of the guest's pass. The limit "
      "is a second pass over the then populated and mapped memory. Every "
      "page is verified after every run.\n")
    w("Guest modes (tests/vm/lib/kvmtest.h): `irqchip` has KVM's in-kernel "
      "irqchip and runs with interrupts on, as Firecracker, cloud-hypervisor "
      "and QEMU run guests: a fault on a page the handler has not populated "
      "yet becomes an async #PF (the vCPU halts until a worker has the page; "
      "`async` and `auto` prefetch when it completes). `pv-apf` also enables "
      "PV async page faults in the guest (\"page not present\" / \"page "
      "ready\"), as Linux guests do. `plain` has neither (the vCPU thread "
      "waits in the fault). The zero-copy restore maps the guest memory "
      "from a shared memfd whose page cache holds the snapshot; the handler "
      "registers MINOR mode and answers with UFFDIO_CONTINUE on the chunk, "
      "so nothing is copied.\n")

    rows = []
    mode_list = bcfg.get("modes", "plain").split(":")
    parts = {}
    for r in runs:
        parts.setdefault((r.get("mode", "plain"), r.get("restore", "copy")), []).append(r)
    rank = {md_: i for i, md_ in enumerate(mode_list)}
    order = sorted(parts, key=lambda k: (k[0] != mode_list[0], k[1] != "copy",
                                         rank.get(k[0], 99), k))
    bad = False
    for i, (mode, restore) in enumerate(order):
        title = f"{SECTION_TITLES.get(mode, mode + ' guest')}, " + (
            "zero-copy restore (memfd, MINOR mode, UFFDIO_CONTINUE)"
            if restore == "zc" else "UFFDIO_COPY restore")
        if i == 0:
            title += " (main table)"
        png = "results.png" if i == 0 else f"results-{mode}-{restore}.png"
        bad |= section(parts[(mode, restore)], bcfg, args, md, rows, title, png)
    if fails:
        w("## Errors\n")
        for f in fails:
            w(f"- `{f}`")
        w("")

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    fields = ["mode", "restore", "kind", "cfg", "label", "chunk_kib", "mib", "vcpus", "runs", "errors",
              "median_ms", "min_ms", "max_ms", "limit_ms", "vs_stock_pct", "norm_ms",
              "norm_vs_stock_pct", "copy_ms",
              "rest_ms", "rest_vs_stock_pct", "events", "dup",
              "chunks", "pages", "pf_taken", "pf_2nd_pass", "windows", "mapped",
              "faults_per_chunk", "cost_us_per_mapped"]
    with open(os.path.join(args.out, "results.csv"), "w", newline="") as f:
        cw = csv.DictWriter(f, fieldnames=fields)
        cw.writeheader()
        for r in rows:
            cw.writerow({k: ("" if r.get(k) is None else
                             (f"{r[k]:.4g}" if isinstance(r.get(k), float) else r[k]))
                         for k in fields})
    print("\n".join(md))
    print(f"report: {args.out}/results.md, results.csv, results*.png")
    return 1 if fails or bad else 0


def plot(out, uffd, chunks, cfgs, limit, mib_of, key, png="results.png",
         title=""):
    same_m = len(set(mib_of.values())) == 1
    scale = {c: 1.0 if same_m else 1.0 / mib_of[c] for c in chunks}
    what = "median of normalized times" if key == "norm_ms" else "median"
    ylabel = (f"time of the pass over {next(iter(mib_of.values()))} MiB (ms, {what})"
              if same_m else f"time per MiB restored (ms, {what})")
    dat = os.path.join(out, png.replace(".png", ".dat"))
    lines = cfgs + ["copy", "limit"]
    with open(dat, "w") as f:
        for cf in lines:
            f.write(f"# {cf}\n")
            for c in chunks:
                if cf == "limit":
                    v = limit[c][0]
                elif cf == "copy":
                    g = uffd.get(("stock", c))
                    v = g.med("copy_ms") if g else None
                else:
                    g = uffd.get((cf, c))
                    v = g.med(key) if g else None
                if v is not None and v > 0:
                    f.write(f"{c // 1024} {v * scale[c]:.6g}\n")
            f.write("\n\n")
    styles = []
    for i, cf in enumerate(lines):
        if cf == "stock":
            st = "lw 4 lc rgb 'black' pt 7"
        elif cf == "limit":
            st = "lw 2 dt 2 lc rgb 'gray40' pt 0"
        elif cf == "copy":
            st = "lw 2 dt 3 lc rgb 'gray20' pt 0"
        else:
            st = f"lw 2 lc rgb '{COLORS[i % len(COLORS)]}' pt {i % 12 + 1}"
        lb = ("limit (2nd pass, mapped)" if cf == "limit" else
              "handler populate time (UFFDIO_COPY or _CONTINUE)" if cf == "copy" else label(cf))
        styles.append(f"'{dat}' index {i} using 1:2 with linespoints {st} title '{lb}'")
    xt = ", ".join(f"'{kib(c).replace(' ', '')}' {c // 1024}" for c in chunks)
    script = f"""
set terminal pngcairo size 1100,700 font 'sans,10' noenhanced
set output '{os.path.join(out, png)}'
set title "Restore through userfaultfd: guest pass time vs handler chunk size (QEMU TCG, nested SVM)\\n{title}"
set logscale xy
set xlabel 'handler chunk size C'
set ylabel '{ylabel}'
set xtics ({xt})
set grid
set key outside right top
plot {', '.join(styles)}
"""
    reportlib.gnuplot(script, "report")


if __name__ == "__main__":
    sys.exit(main())
