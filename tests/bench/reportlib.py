# SPDX-License-Identifier: GPL-2.0
"""What the benchmark reports (report.py, scale-report.py) share: their
command line and their gnuplot call.  Standard library only."""
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


def gnuplot(script, who):
    """Run gnuplot on script; a failure is said on stderr as who's, not
    raised (the tables are made without the plot)."""
    try:
        subprocess.run(['gnuplot'], input=script, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print('%s: gnuplot failed: %s' % (who, e), file=sys.stderr)
