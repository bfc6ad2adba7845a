#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Instructions per function, from a "make cost COST_PROF=1" run.

Inputs in --dir: cost-1.log (the guest's console: @@COSTSYM and @@COST
lines, see tests/cost/cost.c) and prof-1.txt (the plugin's per-16-byte
counts at every snapshot, see tests/cost/meter.c).  The symbols are the
guest's /proc/kallsyms (@@COSTSYM lines): the core kernel's, printed once,
and the modules', printed after the module swap that preceded each
configuration.

For each configuration, as report.py does, the counts of its smallest size
are subtracted from those of its largest, and divided by the difference in
pages prefetched (or, without prefetch, in guest faults): the table is the
instructions per prefetched page (per guest fault) by function.
"""
import argparse
import bisect
import collections
import sys

from report import kv


def read_prof(path):
    snaps, cur = {}, None
    with open(path) as f:
        for line in f:
            if line.startswith('P '):
                cur = snaps.setdefault(int(line.split()[1]), {})
            elif line.startswith('F ') and cur is not None:
                _, a, c = line.split()
                cur[int(a, 16)] = int(c)
    return snaps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--dir', required=True)
    ap.add_argument('--top', type=int, default=25)
    a = ap.parse_args()

    core = []
    snaps = read_prof('%s/prof-1.txt' % a.dir)
    # A module swap prints @@COSTMOD then @@COSTSYM lines: a @@COSTMOD
    # after anything else starts a new symbol table.
    runs, modsyms, last = [], [], None
    with open('%s/cost-1.log' % a.dir, errors='replace') as f:
        for line in f:
            line = line.strip().replace('\r', '')
            tag = line.split(' ', 1)[0]
            if tag == '@@COSTMOD' and last not in ('@@COSTMOD', '@@COSTSYM'):
                modsyms = []
            if tag == '@@COSTSYM':
                _, addr, name, mod = line.split()[:4]
                if mod == 'vmlinux':
                    core.append((int(addr, 16), name))
                else:
                    modsyms.append((int(addr, 16), '%s [%s]' % (name, mod)))
            elif tag == '@@COST':
                runs.append((kv(line), sorted(modsyms)))
            if tag.startswith('@@COST'):
                last = tag
    if not runs:
        sys.exit('profile.py: no @@COST lines in %s/cost-1.log' % a.dir)

    by_cfg = collections.OrderedDict()
    for r, syms in runs:
        by_cfg.setdefault(r['cfg'], []).append((r, syms))

    for cfg, rs in by_cfg.items():
        rs.sort(key=lambda x: int(x[0]['pages']))
        (lo, _), (hi, syms) = rs[0], rs[-1]
        table = sorted(core + syms)
        addrs = [t[0] for t in table]

        def delta(r):
            s0, s1 = snaps[int(r['s0'])], snaps[int(r['s1'])]
            return {k: v - s0.get(k, 0) for k, v in s1.items()
                    if v != s0.get(k, 0)}
        dlo, dhi = delta(lo), delta(hi)
        dm = int(hi['mapped']) - int(lo['mapped'])
        dp = int(hi['pf']) - int(lo['pf'])
        unit, div = ('prefetched page', dm) if dm > 0 else ('guest fault', dp)
        fn = collections.Counter()
        for k in set(dlo) | set(dhi):
            i = bisect.bisect_right(addrs, k) - 1
            name = table[i][1] if i >= 0 else '?'
            fn[name] += dhi.get(k, 0) - dlo.get(k, 0)
        total = sum(fn.values())
        print('## %s: instructions per %s (%d more)' % (cfg, unit, div))
        print('%10s %7s  %s' % ('insns', 'share', 'function'))
        for name, c in fn.most_common(a.top):
            print('%10.1f %6.1f%%  %s' % (c / div, 100.0 * c / total, name))
        print('%10.1f %6.1f%%  total' % (total / div, 100.0))
        print()


if __name__ == '__main__':
    main()
