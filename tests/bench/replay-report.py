#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The table of make bench-replay (issue 50) from its @@REPLAY lines.

usage: replay-report.py --lines replay-lines.txt --out results.md
                        [--abi ABI] [--command CMD] [--date DATE]
                        [--commit ID] [--vm-seconds N]

One markdown table per restore mode (copy, zc): per arm the median of
the rounds (with min-max) of the guest's time and guest faults, the
derived ratios, precision and coverage; then the recording passes and
the issue's targets, each checked against the medians.  Ratios compare
arms measured in the same boot, interleaved.
"""
import statistics as st
from collections import defaultdict

import reportlib

ARMS = ['none', 'auto-C', 'prefault', 'replay', 'replay-changed',
        'prefault-changed', 'floor', 'floor-mapped']
MODES = ['copy', 'zc']


def parse(path):
    rows, cfg = [], {}
    with open(path, errors='replace') as f:
        for line in f:
            line = line.strip()
            if line.startswith('@@REPLAYCFG'):
                cfg = dict(kv.split('=', 1) for kv in line.split()[1:]
                           if '=' in kv)
            elif line.startswith('@@REPLAY '):
                rows.append(reportlib.fields(line))
    return rows, cfg


def nums(g, k):
    return [r[k] for r in g if isinstance(r.get(k), (int, float))]


def med(g, k):
    v = nums(g, k)
    return st.median(v) if v else None


def span(g, k, spec):
    v = nums(g, k)
    if not v:
        return '-'
    m = format(st.median(v), spec)
    if len(v) == 1 or min(v) == max(v):
        return m
    return '%s (%s-%s)' % (m, format(min(v), spec), format(max(v), spec))


def f(v, spec, suffix=''):
    return '-' if v is None else format(v, spec) + suffix


def ratio(a, b):
    """a / b, or None."""
    return a / b if a is not None and b else None


def fewer(a, base):
    """Percent fewer a than base."""
    return 100.0 * (1 - a / base) if a is not None and base else None


def paired(ga, gb, k='time_ms'):
    """Median over the rounds of b's k over a's k in the same round
    (None without a common round): drift of the host between rounds
    cancels."""
    a = {r['round']: r[k] for r in ga if isinstance(r.get(k), (int, float))}
    b = {r['round']: r[k] for r in gb if isinstance(r.get(k), (int, float))}
    v = [b[n] / a[n] for n in a if n in b and a[n]]
    return st.median(v) if v else None


def table(out, groups, mode):
    g = {a: [r for r in groups.get((a, mode), []) if not r.get('skipped')]
         for a in ARMS}
    t = {a: med(g[a], 'time_ms') for a in ARMS}
    pf = {a: med(g[a], 'faults') for a in ARMS}
    out.append('### %s restore%s\n' % (
        mode, ' (MISSING, UFFDIO_COPY)' if mode == 'copy'
        else ' (MINOR over a memfd, UFFDIO_CONTINUE)'))
    out.append('| arm | runs | time ms | guest faults | faults vs none '
               '| time vs auto-C | prefetched | pre-faulted | precision '
               '| coverage | replay_pos / runs | uffd events |')
    out.append('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for a in ARMS:
        rows = groups.get((a, mode), [])
        if not rows:
            continue
        if all(r.get('skipped') for r in rows):
            out.append('| %s | 0 | skipped (no replay in KVM) |' % a +
                       ' |' * 9)
            continue
        rows = g[a]
        sp = paired(g[a], g['auto-C'])
        pos = '-'
        if nums(rows, 'replay_pos') and a.startswith('replay'):
            pos = '%s / %s' % (f(med(rows, 'replay_pos'), '.0f'),
                               f(med(rows, 'replay_runs'), '.0f'))
        out.append('| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
            a, len(rows), span(rows, 'time_ms', '.1f'),
            span(rows, 'faults', '.0f'),
            f(fewer(pf[a], pf['none']), '.1f', '%'),
            f(sp, '.2f', 'x'),
            f(med(rows, 'prefetched'), '.0f'),
            f(med(rows, 'prefaulted'), '.0f'),
            f(med(rows, 'precision'), '.1f', '%'),
            f(med(rows, 'coverage'), '.1f', '%'),
            pos, f(med(rows, 'events'), '.0f')))
    out.append('')
    out.append('Targets (%s): faults from the medians above, time ratios the median of the rounds\' ratios:\n' % mode)

    def target(text, value, ok):
        out.append('- %s: %s%s' % (
            text, value,
            '' if ok is None else (' (met)' if ok else ' (**not met**)')))

    if pf['replay'] is None:
        out.append('- replay: not run (KVM has no KVM_PREFETCH_ORDER or '
                   'no replay policy)')
    else:
        v = fewer(pf['replay'], pf['none'])
        target('replay takes >= 97% fewer guest faults than none',
               f(v, '.1f', '%% fewer (%s vs %s)' % (
                   f(pf['replay'], '.0f'), f(pf['none'], '.0f'))),
               None if v is None else v >= 97)
        v = paired(g['replay'], g['auto-C'])
        target('replay takes >= 3x less time than auto-C',
               f(v, '.2f', 'x'), None if v is None else v >= 3)
        v = paired(g['replay'], g['prefault'])
        target('replay is faster than prefault',
               f(v, '.2f', 'x (prefault time / replay time)'),
               None if v is None else v > 1)
        v = paired(g['replay'], g['replay-changed'])
        target('replay-changed is within 2x of replay',
               f(v, '.2f', 'x (replay-changed time / replay time)'),
               None if v is None else v <= 2)
    out.append('')


def main():
    a = reportlib.parse_args('--lines', '--command', '--date', '--commit')
    rows, cfg = parse(a.lines)
    groups = defaultdict(list)
    records = []
    for r in rows:
        if r.get('arm') == 'record':
            records.append(r)
        else:
            groups[(r.get('arm'), r.get('mode'))].append(r)
    bad = [r for r in rows if r.get('ok') == 0]
    out = ['# Record and replay (issue 50): make bench-replay\n']
    out.append('Taken %s%s on %s, in the test VM (Debian\'s 6.1 kernel '
               'under QEMU TCG, our modules), %s s of VM time. '
               'Command: `%s`.\n' % (
                   a.date or '?', ' at commit ' + a.commit if a.commit else '',
                   a.abi or '?', a.vm_seconds or '?', a.command or '?'))
    nice = cfg.get('handler_nice')
    if nice is None and 'handler_nice=' in (a.command or ''):
        nice = a.command.split('handler_nice=')[1].split(',')[0].split()[0]
    if cfg:
        out.append('Workload: %s of the %s pages of %s MiB (seed %s, '
                   'runs of 1-%s pages), the changed workload %s%% of them '
                   'replaced; chunk %s KiB; %s rounds; vCPU and handler '
                   'pinned to CPU %s (-1: not pinned), the handler at nice %s; the populate loop %s%s; '
                   'in-kernel irqchip guest. '
                   'KVM_PREFETCH_ORDER (recording): %s; replay policy: %s.\n' % (
                       cfg.get('touched'), cfg.get('pages'), cfg.get('mib'),
                       cfg.get('seed'), cfg.get('maxrun'),
                       cfg.get('changed'), cfg.get('chunk'),
                       cfg.get('rounds'), cfg.get('pin'), nice or '0',
                       'run by the handler thread between faults'
                       if cfg.get('loop_cpu', '-1') == '-1' else
                       'in a thread of its own on CPU ' + cfg.get('loop_cpu'),
                       ', then the rest of memory' if cfg.get('rest') == '1'
                       else '',
                       'yes' if cfg.get('record') == '1' else 'no',
                       'yes' if cfg.get('replay') == '1' else 'no'))
    out.append('Times are the guest\'s pass (wall time of its one KVM_RUN '
               'over the table of pages), medians with min-max; "faults vs '
               'none" is how many fewer guest faults (pf_taken) than `none` '
               'in the same mode; "time vs auto-C" is auto-C\'s time over the '
               'arm\'s in the same round, the median of the rounds (so are '
               'the time ratios of the targets); precision = used / (used + unused + '
               'untouched), coverage = avoided / (avoided + guest faults), '
               'from the VM\'s prefetch usage stats over the pass '
               '(KVM_PRE_FAULT_MEMORY mappings are not prefetches and do '
               'not count). sysfs-docs/benchmark.rst, "Record and replay", '
               'says how to read it.\n')
    if bad:
        out.append('**%d runs failed their check (ok=0)**: their numbers are '
                   'in the lines file, not to be trusted.\n' % len(bad))
    for m in MODES:
        if any(k[1] == m for k in groups):
            table(out, groups, m)
    if records:
        out.append('### The recording passes\n')
        out.append('| mode | order runs | order pages | recorded, not touched '
                   '| touched, not recorded | recorded twice '
                   '| in the touch order | truncated | ok |')
        out.append('|---|---:|---:|---:|---:|---:|---:|---:|---:|')
        for r in records:
            out.append('| %s | %s | %s | %s | %s | %s | %s of %s | %s | %s |' % (
                r.get('mode'), r.get('order_runs'), r.get('order_pages'),
                r.get('not_touched'), r.get('missing'), r.get('twice'),
                r.get('in_order'), r.get('touched'), r.get('truncated'),
                r.get('ok')))
        out.append('')
    elif groups:
        out.append('No recording pass: KVM has no KVM_PREFETCH_ORDER; the '
                   'populate loop of prefault used the workload\'s own '
                   'first-touch order (order=workload in the lines).\n')
    with open(a.out, 'w') as fo:
        fo.write('\n'.join(out))
    print('\n'.join(out))


if __name__ == '__main__':
    main()
