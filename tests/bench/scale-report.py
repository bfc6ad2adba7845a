#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The tables of make bench-scale (issue 32) from its @@SCALE lines.

usage: scale-report.py --lines scale-lines.txt --out results.md
                       [--abi ABI] [--command CMD] [--date DATE]
                       [--vm-seconds N]

One markdown table per dimension (vcpus, clones, mem, random,
patterns) and a
section that checks each target of the issue against the numbers.
Times are medians over the rounds; ratios compare arms measured in the
same boot, interleaved.
"""
import math
import os
import statistics as st
from collections import defaultdict

import reportlib


def parse(path):
    rows, env, cfg = [], {}, ''
    with open(path, errors='replace') as f:
        for line in f:
            line = line.strip()
            if line.startswith('@@SCALEENV'):
                env = dict(kv.split('=', 1) for kv in line.split()[1:])
            elif line.startswith('@@SCALECFG'):
                cfg = line.split(None, 1)[1] if ' ' in line else ''
            elif line.startswith('@@SCALE '):
                rows.append(reportlib.fields(line))
    return rows, env, cfg


def med(v):
    return st.median(v) if v else float('nan')


def p95(v):
    """Nearest-rank 95th percentile."""
    if not v:
        return float('nan')
    s = sorted(v)
    return s[max(0, math.ceil(0.95 * len(s)) - 1)]


def pct(a, b):
    return (a / b - 1) * 100 if b else float('nan')


def paired(a, b, key='ms'):
    """Median over rounds of a's time / b's time (same round): interleaved
    runs of one round share the host's load."""
    bb = {r['round']: r[key] for r in b}
    v = [r[key] / bb[r['round']] for r in a if bb.get(r['round'])]
    return (st.median(v) - 1) * 100 if v else float('nan')


def fmt_pct(x):
    return 'n/a' if math.isnan(x) else '%+.0f%%' % x


def group(rows, dim, *keys):
    g = defaultdict(list)
    for r in rows:
        if r.get('dim') == dim:
            g[tuple(r[k] for k in keys)].append(r)
    return g


def vcpus_table(g, any_r, cpus, out, verdicts):
    out.append('## vCPUs: one VM, N vCPUs restoring disjoint parts at once\n')
    out.append('Each vCPU has its own memslot, userfaultfd range and handler '
               'thread; the parts together are %s MiB. The test VM has %d '
               'vCPUs (and QEMU runs them on one host thread, '
               '`-accel tcg,thread=single`): more than %d vCPUs '
               'oversubscribe (marked *).\n' %
               (any_r['mib'], cpus, cpus))
    out.append('"auto vs none": median over the rounds of the time ratio '
               'within a round (the two arms run back to back).\n')
    out.append('| restore | C | vCPUs | none ms | auto ms | auto vs none '
               '| none faults/chunk | auto faults/chunk | auto prefetched | runs |')
    out.append('|---|---|---|---|---|---|---|---|---|---|')
    adv = defaultdict(dict)
    fpc_bad = []
    for (restore, chunk, n) in sorted({k[:3] for k in g},
                                      key=lambda k: (k[0], k[1], k[2])):
        none = g.get((restore, chunk, n, 'none'), [])
        auto = g.get((restore, chunk, n, 'auto-C'), [])
        ms_n = med([r['ms'] for r in none])
        ms_a = med([r['ms'] for r in auto])
        fn = med([r['pf'] / r['chunks'] for r in none])
        fa = med([r['pf'] / r['chunks'] for r in auto])
        ok = all(r['ok'] for r in none + auto)
        a = paired(auto, none)
        adv[(restore, chunk)][n] = a
        if fa > 1.0:
            fpc_bad.append('%s %d KiB %d vCPUs: %.2f' % (restore, chunk, n, fa))
        out.append('| %s | %d KiB | %d%s | %.0f | %.0f | %s | %.2f | %.2f | %.0f | %d+%d%s |' %
                   (restore, chunk, n, '*' if n > cpus else '', ms_n, ms_a,
                    fmt_pct(a), fn, fa,
                    med([r['mapped'] for r in auto]), len(none), len(auto),
                    '' if ok else ' (FAIL)'))
    out.append('')
    verdicts.append('- vCPUs, faults per chunk stay 1.00 (auto): ' +
                    ('**met** at every point.' if not fpc_bad else
                     '**missed**: ' + '; '.join(fpc_bad) + '.'))
    for (restore, chunk), d in sorted(adv.items()):
        if chunk != 512 or len(d) < 2:
            continue
        vals = [d[n] for n in sorted(d)]
        spread = max(vals) - min(vals)
        verdicts.append(
            '- vCPUs, auto\'s advantage at 512 KiB (%s) within 10 points from '
            '%d to %d vCPUs: %s (%s; spread %.0f points).' %
            (restore, min(d), max(d),
             '**met**' if spread <= 10 else '**missed** by %.0f points' %
             (spread - 10),
             ', '.join('%d: %s' % (n, fmt_pct(d[n])) for n in sorted(d)),
             spread))


def clones_table(g, any_r, cpus, out, verdicts):
    out.append('## Clones: N VMs restored at once from one snapshot\n')
    out.append('One memfd of %s MiB (the snapshot, in the page cache), '
               'mapped MAP_SHARED by every clone; MINOR-mode userfaultfd '
               'and one handler thread per clone (UFFDIO_CONTINUE of %s '
               'KiB chunks), one vCPU per clone. Per-VM times are over all '
               'clones of all rounds; total is the wall time until the last '
               'clone is done (median over rounds); CPU is per clone '
               '(vCPU thread + handler thread, CLOCK_THREAD_CPUTIME_ID).\n' %
               (any_r['mib'], any_r['chunk']))
    out.append('| N | arm | per-VM median ms | per-VM p95 ms | total ms '
               '| vCPU CPU ms/VM | handler CPU ms/VM | faults/chunk | samples |')
    out.append('|---|---|---|---|---|---|---|---|---|')
    res = {}
    for (n, arm) in sorted(g, key=lambda k: (k[0], k[1] != 'none')):
        rs = g[(n, arm)]
        ms = [r['ms'] for r in rs]
        tot = med(list({r['round']: r['total_ms'] for r in rs}.values()))
        res[(n, arm)] = (med(ms), p95(ms), tot)
        ok = all(r['ok'] for r in rs)
        out.append('| %d | %s | %.0f | %.0f | %.0f | %.0f | %.1f | %.2f | %d%s |' %
                   (n, arm, med(ms), p95(ms), tot,
                    med([r['vcpu_cpu_ms'] for r in rs]),
                    med([r['handler_cpu_ms'] for r in rs]),
                    med([r['pf'] / r['chunks'] for r in rs]), len(rs),
                    '' if ok else ' (FAIL)'))
    out.append('')
    ns = sorted({k[0] for k in g})
    if ('auto-C' in {k[1] for k in g}) and 1 in ns and max(ns) > 1:
        nmax = max(ns)
        base = res[(1, 'auto-C')][0]
        p = res[(nmax, 'auto-C')][1]
        ratio = p / base
        one = g[(1, 'auto-C')]
        cpu1 = med([r['vcpu_cpu_ms'] + r['handler_cpu_ms'] for r in one])
        bound = nmax * cpu1 / cpus
        verdicts.append(
            '- Clones, auto\'s p95 at N = %d within 2x of its N = 1 time: '
            '%s (p95 %.0f ms against %.0f ms: %.2fx). A clone needs %.0f ms '
            'of CPU at N = 1 (vCPU + handler thread); %d clones on %d guest '
            'vCPUs (run by one TCG host thread) cannot all be done before '
            '%d x %.0f / %d = %.0f ms (%.1fx N = 1) even with no '
            'contention at all, so 2x is out of this machine\'s reach; '
            'whether the cost per clone grows is in the CPU columns.' %
            (nmax, '**met**' if ratio <= 2 else '**missed** by %.2fx' %
             (ratio - 2), p, base, ratio, cpu1, nmax, cpus, nmax, cpu1,
             cpus, bound, bound / base))


def mem_table(g, any_r, cpus, out, verdicts):
    out.append('## Memory size: one vCPU restoring M MiB (copy, %s KiB chunks)\n'
               % any_r['chunk'])
    out.append('"outside the copy": the restore time less the handler\'s CPU '
               'time in UFFDIO_COPY (which the vCPU waits for), per GiB: the '
               'part that guest faults and prefetch cost.\n')
    out.append('| MiB | arm | ms | ms per GiB | faults/chunk | prefetched '
               '| handler copy ms | outside the copy, ms per GiB '
               '| auto vs none | runs |')
    out.append('|---|---|---|---|---|---|---|---|---|---|')
    per_gib = defaultdict(dict)
    per_gib_nc = defaultdict(dict)
    for (mib, arm) in sorted(g, key=lambda k: (k[0], k[1] != 'none')):
        rs = g[(mib, arm)]
        ms = med([r['ms'] for r in rs])
        pg = ms * 1024 / mib
        per_gib[arm][mib] = pg
        nc = med([r['ms'] - r['copy_ms'] for r in rs]) * 1024 / mib
        per_gib_nc[arm][mib] = nc
        vs = ''
        if arm != 'none' and (mib, 'none') in g:
            vs = fmt_pct(paired(rs, g[(mib, 'none')]))
        ok = all(r['ok'] for r in rs)
        out.append('| %d | %s | %.0f | %.0f | %.2f | %.0f | %.0f | %.0f | %s | %d%s |' %
                   (mib, arm, ms, pg, med([r['pf'] / r['chunks'] for r in rs]),
                    med([r['mapped'] for r in rs]),
                    med([r['copy_ms'] for r in rs]), nc, vs, len(rs),
                    '' if ok else ' (FAIL)'))
    out.append('')
    for what, tab in (('', per_gib), (' outside the copy', per_gib_nc)):
        for arm, d in sorted(tab.items()):
            if len(d) < 2:
                continue
            lo, hi = min(d.values()), max(d.values())
            dev = (hi / lo - 1) * 100
            verdict = ('**met**' if dev <= 10 else
                       '**missed** by %.1f points' % (dev - 10))
            verdicts.append(
                '- Memory size, %s: per-GiB time%s within 10%% across %s '
                'MiB: %s (%s ms/GiB; max/min %+.1f%%).' %
                (arm, what, '/'.join(str(m) for m in sorted(d)), verdict,
                 ', '.join('%.0f' % d[m] for m in sorted(d)), dev))


def random_table(g, any_r, cpus, out, verdicts):
    out.append('## Random order and sparse touches (one vCPU, %s MiB, copy, '
               '%s KiB chunks)\n' % (any_r['mib'], any_r['chunk']))
    out.append('`rand`: chunks in a seeded random order (seed = round), '
               'every page of a chunk; `rand-sparse` / `seq-sparse`: the first '
               'page of every 8, chunks random / linear. "wasted": pages '
               'prefetched that the guest never touched, counted by reading '
               'every untouched page afterwards with policy none (a page that '
               'does not fault was mapped).\n')
    out.append('"vs none" and "vs best fixed" (the faster of auto nr=C/4K and '
               'auto nr=8 in the same round) are medians over the rounds of '
               'the time ratio within a round.\n')
    out.append('| workload | arm | ms | vs none | vs best fixed | guest faults '
               '| faults/chunk | prefetched | wasted | runs |')
    out.append('|---|---|---|---|---|---|---|---|---|---|')
    order = ['none', 'auto-C', 'auto-8', 'adaptive']
    for wl in ['rand', 'rand-sparse', 'seq-sparse']:
        ms = {a: med([r['ms'] for r in g.get((wl, a), [])]) for a in order}
        if all(math.isnan(v) for v in ms.values()):
            continue
        best_rows = []
        for rnd in sorted({r['round'] for a in ('auto-C', 'auto-8')
                           for r in g.get((wl, a), [])}):
            t = [r['ms'] for a in ('auto-C', 'auto-8')
                 for r in g.get((wl, a), []) if r['round'] == rnd]
            best_rows.append({'round': rnd, 'ms': min(t)})
        none_rows = g.get((wl, 'none'), [])
        vs_none, vs_best = {}, {}
        for a in order:
            rs = g.get((wl, a), [])
            if not rs:
                continue
            vs_none[a] = paired(rs, none_rows)
            vs_best[a] = paired(rs, best_rows)
            ok = all(r['ok'] for r in rs)
            out.append('| %s | %s | %.0f | %s | %s | %.0f | %.2f | %.0f | %.0f | %d%s |' %
                       (wl, a, ms[a], fmt_pct(vs_none[a]),
                        fmt_pct(vs_best[a]) if a != 'none' else '',
                        med([r['pf'] for r in rs]),
                        med([r['pf'] / r['chunks'] for r in rs]),
                        med([r['mapped'] for r in rs]),
                        med([r['wasted'] for r in rs]), len(rs),
                        '' if ok else ' (FAIL)'))
        if 'adaptive' in vs_none:
            vn, vb = vs_none['adaptive'], vs_best['adaptive']
            verdicts.append(
                '- Random, %s: adaptive never slower than none: %s (%s); '
                'within 10%% of the best fixed window: %s (%s).' %
                (wl, '**met**' if vn <= 0 else '**missed** by %.0f%%' % vn,
                 fmt_pct(vn), '**met**' if vb <= 10 else
                 '**missed** by %.0f points' % (vb - 10), fmt_pct(vb)))
    out.append('')


PATTERNS = ['seq', 'rand', 'reverse', 'seq-sparse', 'rand-sparse',
            'stride2', 'stride8', 'stride64', 'hotset']
SPARSE_PATTERNS = ('seq-sparse', 'rand-sparse', 'stride2', 'stride8', 'stride64',
                   'hotset')


def patterns_table(g, any_r, cpus, out, verdicts):
    """Issue 49: each access pattern at each chunk size, none / auto
    nr=C/4K / adaptive."""
    out.append('## Access patterns (one vCPU, %s MiB, copy restore)\n'
               % any_r['mib'])
    out.append('Dense patterns touch every page: `seq` (linear), `rand` '
               '(chunks in a seeded random order), `reverse` (top down). '
               'Sparse ones do not: `seq-sparse` and `stride8` (one page in '
               '8, linear; the same pages), `rand-sparse` (one in 8, chunks '
               'in random order), `stride2`, `stride64`, `hotset` (a random '
               'eighth of the pages, three passes in random orders). '
               'Times are medians over the rounds; "vs none" and "vs '
               'auto-C" are medians of the per-round ratios (the arms of a '
               'point run back to back). "noise" is the spread of `none` '
               'over the rounds, (max - min) / median. faults/chunk: guest '
               'faults per chunk the pattern touches. wasted: pages '
               'prefetched and never touched, as a share of the pages '
               'prefetched (- when none were). "(no window)": adaptive '
               'opened no window in any round, so it did what none did '
               'and its ratio to none is the machine\'s noise.\n')
    out.append('| pattern | C KiB | none ms | auto-C ms | adaptive ms '
               '| noise | adaptive vs none | adaptive vs auto-C '
               '| faults/chunk none/auto-C/adaptive '
               '| prefetched auto-C/adaptive | wasted auto-C/adaptive | runs |')
    out.append('|---|---|---|---|---|---|---|---|---|---|---|---|')
    slow, waste, dense_far, fpc, extra_rows = [], [], [], [], []
    n_pts = 0
    chunks = sorted({k[1] for k in g})
    pats = [p for p in PATTERNS if any(k[0] == p for k in g)]
    for p in pats:
        for c in chunks:
            rs = {a: g.get((p, c, a), []) for a in ('none', 'auto-C',
                                                      'adaptive')}
            if not all(rs.values()):
                continue
            n_pts += 1
            ms = {a: med([r['ms'] for r in rs[a]]) for a in rs}
            nn = [r['ms'] for r in rs['none']]
            noise = (max(nn) - min(nn)) / med(nn) * 100 if nn else 0
            vn = paired(rs['adaptive'], rs['none'])
            va = paired(rs['adaptive'], rs['auto-C'])
            f = {a: med([r['pf'] / max(1, r['touched_chunks'])
                         for r in rs[a]]) for a in rs}
            mp = {a: med([r['mapped'] for r in rs[a]]) for a in rs}
            wp = {}
            for a in ('auto-C', 'adaptive'):
                m = sum(r['mapped'] for r in rs[a])
                wp[a] = (sum(r['wasted'] for r in rs[a]) / m * 100
                         if m else float('nan'))
            dense = bool(rs['none'][0].get('dense'))
            ok = all(r['ok'] for a in rs for r in rs[a])
            # No window in any round: the same work as none, so its
            # ratio to none shows the machine's noise.
            idle = all(r['windows'] == 0 for r in rs['adaptive'])
            a512 = g.get((p, c, 'auto-512'), [])
            if a512:
                extra_rows.append('| %s | %d | %.0f | %s | %s | %.2f |' %
                                  (p, c, med([r['ms'] for r in a512]),
                                   fmt_pct(paired(a512, rs['auto-C'])),
                                   fmt_pct(paired(rs['adaptive'], a512)),
                                   med([r['pf'] / max(1, r['touched_chunks'])
                                        for r in a512])))
            out.append('| %s%s | %d | %.0f | %.0f | %.0f | %.0f%% | %s%s | %s '
                       '| %.2f / %.2f / %.2f | %.0f / %.0f | %s / %s | %d%s |' %
                       (p, '' if dense else ' (sparse)', c, ms['none'],
                        ms['auto-C'], ms['adaptive'], noise, fmt_pct(vn),
                        ' (no window)' if idle else '', fmt_pct(va), f['none'], f['auto-C'], f['adaptive'],
                        mp['auto-C'], mp['adaptive'],
                        '-' if math.isnan(wp['auto-C']) else
                        '%.0f%%' % wp['auto-C'],
                        '-' if math.isnan(wp['adaptive']) else
                        '%.1f%%' % wp['adaptive'],
                        len(rs['adaptive']), '' if ok else ' (FAIL)'))
            if vn > noise:
                slow.append('%s %d KiB %s (noise %.0f%%)' %
                            (p, c, fmt_pct(vn), noise))
            if not dense and not math.isnan(wp['adaptive']) and \
                    wp['adaptive'] > 10:
                waste.append('%s %d KiB %.1f%%' % (p, c, wp['adaptive']))
            if dense and va > 10:
                dense_far.append('%s %d KiB %s' % (p, c, fmt_pct(va)))
            if p == 'rand' and f['adaptive'] > 1.5:
                fpc.append('%d KiB %.2f' % (c, f['adaptive']))
    out.append('')
    if extra_rows:
        out.append('auto nr=512 (`auto-512`): adaptive\'s steady window '
                   'without its logic, so that "auto-512 vs auto-C" is what '
                   'a window larger than the chunk costs the engine and '
                   '"adaptive vs auto-512" what the policy adds.\n')
        out.append('| pattern | C KiB | auto-512 ms | auto-512 vs auto-C '
                   '| adaptive vs auto-512 | auto-512 faults/chunk |')
        out.append('|---|---|---|---|---|---|')
        out.extend(extra_rows)
        out.append('')
    verdicts.append(
        '- Patterns, adaptive never slower than none beyond the noise '
        'band (%d points): %s' % (n_pts, '**met** at every point.' if not
                                  slow else '**missed** at ' +
                                  '; '.join(slow) + '.'))
    verdicts.append(
        '- Patterns, adaptive wastes at most 10%% of its prefetched pages '
        'on sparse patterns: %s' % ('**met** at every point.' if not waste
                                    else '**missed** at ' +
                                    '; '.join(waste) + '.'))
    verdicts.append(
        '- Patterns, adaptive within 10%% of the best fixed window (auto '
        'nr=C/4K) on dense patterns: %s' %
        ('**met** at every point.' if not dense_far else '**missed** at ' +
         '; '.join(dense_far) + '.'))
    verdicts.append(
        '- Patterns, adaptive takes at most 1.5 faults per chunk in dense '
        'random order: %s' % ('**met** at every chunk size.' if not fpc
                              else '**missed** at ' + '; '.join(fpc) + '.'))


def plot(rows, png):
    """Two panels: clones' per-VM median and p95 against N, and the
    memory dimension's time per GiB against the size (gnuplot)."""
    cl = group(rows, 'clones', 'clones', 'arm')
    mem = group(rows, 'mem', 'mib', 'arm')
    if not cl and not mem:
        return
    data = []
    for arm in ('none', 'auto-C'):
        data.append('# clones %s: N median p95' % arm)
        for n in sorted({k[0] for k in cl if k[1] == arm}):
            ms = [r['ms'] for r in cl[(n, arm)]]
            data.append('%d %.1f %.1f' % (n, med(ms), p95(ms)))
        data.append('\n')
    for arm in ('none', 'auto-C'):
        data.append('# mem %s: MiB s/GiB' % arm)
        for m in sorted({k[0] for k in mem if k[1] == arm}):
            data.append('%d %.3f' % (m, med([r['ms'] for r in mem[(m, arm)]])
                                     * 1024 / m / 1000))
        data.append('\n')
    dat = png[:-4] + '.dat'
    with open(dat, 'w') as f:
        f.write('\n'.join(data) + '\n')
    script = f"""
set terminal pngcairo size 1100,450 font 'sans,10' noenhanced
set output '{png}'
set multiplot layout 1,2
set title 'Clones of one snapshot (zero-copy): per-VM restore time'
set xlabel 'clones restored at once'
set ylabel 'ms'
set logscale xy
set xtics (1,2,4,8)
set key top left
plot '{dat}' index 0 using 1:2 with linespoints title 'none median', \\
     '{dat}' index 0 using 1:3 with linespoints dt 2 title 'none p95', \\
     '{dat}' index 1 using 1:2 with linespoints title 'auto median', \\
     '{dat}' index 1 using 1:3 with linespoints dt 2 title 'auto p95'
set title 'Memory size (copy, 2 MiB chunks): time per GiB'
set xlabel 'MiB restored'
set ylabel 's per GiB'
set logscale x
unset logscale y
set yrange [0:*]
set xtics (64,256,1024,2048,4096)
plot '{dat}' index 2 using 1:2 with linespoints title 'none', \\
     '{dat}' index 3 using 1:2 with linespoints title 'auto nr=C/4K'
unset multiplot
"""
    reportlib.gnuplot(script, 'scale-report')


# Each dimension's table: (its function, the dimension, the keys of a
# row's group).  A table is given its groups, their first row, which
# says what all share (MiB, chunk size), and the test VM's CPUs.
def usage_table(g, any_r, cpus, out, verdicts):
    """KVM's usage stats of the patterns' runs (prefetch-api.rst)."""
    out.append('### Precision and coverage of the patterns (KVM\'s stats)\n')
    out.append('From the VM\'s prefetch_used, _unused, _untouched and '
               '_avoided stats right after the pass, summed over the '
               'rounds: precision = used / (used + unused + untouched), '
               'the share of prefetched pages the guest used (the '
               'complement of "wasted" above, counted by KVM instead of '
               'by a scan); coverage = avoided / (avoided + guest faults). '
               '- where nothing was prefetched.\n')
    out.append('| pattern | C KiB | arm | prefetched | used | precision '
               '| coverage | runs |')
    out.append('|---|---|---|---|---|---|---|---|')
    low = []
    pats = [p for p in PATTERNS if any(k[0] == p for k in g)]
    for p in pats:
        for c in sorted({k[1] for k in g if k[0] == p}):
            for arm in ('auto-C', 'adaptive', 'auto-512'):
                rs = g.get((p, c, arm), [])
                if not rs:
                    continue
                u = sum(r['used'] for r in rs)
                al = u + sum(r['unused'] + r['untouched'] for r in rs)
                av = sum(r['avoided'] for r in rs)
                pf = sum(r['pf'] for r in rs)
                prec = '%.1f%%' % (u / al * 100) if al else '-'
                cov = '%.1f%%' % (av / (av + pf) * 100) if av + pf else '-'
                out.append('| %s | %d | %s | %d | %d | %s | %s | %d |' %
                           (p, c, arm, al, u, prec, cov, len(rs)))
                if arm == 'adaptive' and al >= 64 and u / al < 0.9 and \
                        p in SPARSE_PATTERNS:
                    low.append('%s %d KiB %.1f%%' % (p, c, u / al * 100))
    out.append('')
    verdicts.append('- adaptive\'s precision on sparse patterns, by KVM\'s '
                    'stats (points with at least 64 pages prefetched): %s' %
                    ('**met**, at least 90% everywhere' if not low else
                     '**missed**, below 90%: ' + ', '.join(low)))


TABLES = (
    (vcpus_table, 'vcpus', ('restore', 'chunk', 'vcpus', 'arm')),
    (clones_table, 'clones', ('clones', 'arm')),
    (mem_table, 'mem', ('mib', 'arm')),
    (random_table, 'random', ('workload', 'arm')),
    (patterns_table, 'patterns', ('workload', 'chunk', 'arm')),
    (usage_table, 'usage', ('workload', 'chunk', 'arm')),
)


def main():
    a = reportlib.parse_args('--lines', '--command', '--date')
    rows, env, cfg = parse(a.lines)
    out = ['# Scale benchmark (issue 32)\n',
           'Made by `%s` on %s (guest kernel %s, test VM in QEMU TCG with '
           '`-accel tcg,thread=single`; the host has 2 cores shared with '
           'other jobs, so it was loaded; compare ratios within this run, '
           'not absolute times). Test VM: %s s. kp.scale=`%s`. Raw lines: '
           '`scale-lines.txt`; remake with `python3 tests/bench/'
           'scale-report.py --lines scale-lines.txt --out results.md`.\n' %
           (a.command or 'make bench-scale', a.date or '?', a.abi or '?',
            a.vm_seconds or '?', cfg)]
    bad = [r for r in rows if not r.get('ok', 1)]
    if bad:
        out.append('**%d runs had wrong pages or handler errors (ok=0).**\n'
                   % len(bad))
    verdicts = []
    cpus = int(env.get('guest_cpus', 2))
    for table, dim, keys in TABLES:
        g = group(rows, dim, *keys)
        if g:
            table(g, next(iter(g.values()))[0], cpus, out, verdicts)
    out.append('## Targets (computed from the tables above)\n')
    out.extend(verdicts)
    out.append('')
    png = os.path.join(os.path.dirname(os.path.abspath(a.out)),
                       'results-scale.png')
    plot(rows, png)
    if os.path.exists(png):
        out.insert(1, '![clones and memory size](results-scale.png)\n')
    with open(a.out, 'w') as f:
        f.write('\n'.join(out) + '\n')
    print('\n'.join(out))


if __name__ == '__main__':
    main()
