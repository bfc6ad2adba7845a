# SPDX-License-Identifier: GPL-2.0
"""What the benchmark reports (report.py, scale-report.py,
replay-report.py) share: their command line, the fields of a raw line
and their gnuplot call.  Standard library only."""
import argparse
import subprocess
import sys


def parse_args(lines_flag, *extra):
    """The report's options: lines_flag (the raw lines) and --out, both
    required; --abi, each option of extra and --vm-seconds, default ''."""
    ap = argparse.ArgumentParser()
    ap.add_argument(lines_flag, required=True)
    ap.add_argument('--out', required=True)
    for opt in ('--abi',) + extra + ('--vm-seconds',):
        ap.add_argument(opt, default='')
    return ap.parse_args()


def fields(line):
    """The key=value fields of a raw line after its tag, as numbers where
    they are (float if they have a dot), else as text."""
    d = {}
    for kv in line.split()[1:]:
        k, _, v = kv.partition('=')
        try:
            d[k] = float(v) if '.' in v else int(v)
        except ValueError:
            d[k] = v
    return d


def gnuplot(script, who):
    """Run gnuplot on script; a failure is said on stderr as who's, not
    raised (the tables are made without the plot)."""
    try:
        subprocess.run(['gnuplot'], input=script, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print('%s: gnuplot failed: %s' % (who, e), file=sys.stderr)
