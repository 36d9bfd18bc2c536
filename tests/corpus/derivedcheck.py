# SPDX-License-Identifier: MIT
"""What the checks on copies of corpus files (kineto_flow_order.py, nsys_derived.py) share: their command
line (--cli PATH FILE WORKDIR; the corpus file absent: skipped, CTest's code 77), gapscope-cli's output
as JSON, and expectations printed one per line, failures remembered for the exit status."""
import argparse
import json
import os
import subprocess

SKIP = 77


def arguments(description):
    """The parsed command line, WORKDIR made; None when FILE is not here (no corpus: the caller skips)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--cli", required=True)
    ap.add_argument("file")
    ap.add_argument("workdir")
    a = ap.parse_args()
    if not os.path.exists(a.file):
        print("skipped: %s is not here (no corpus)" % a.file)
        return None
    os.makedirs(a.workdir, exist_ok=True)
    return a


def run(cli, *args):
    """gapscope-cli's stdout; a non-zero exit raises RuntimeError with its stderr."""
    p = subprocess.run([cli] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode:
        raise RuntimeError("%s %s: exit %d: %s" % (cli, " ".join(args), p.returncode, p.stderr.strip()))
    return p.stdout


def run_json(cli, *args):
    return json.loads(run(cli, *args))


class Checks:
    """expect() prints one line per figure ("ok" or "FAIL" with what was expected); status() is the exit."""

    def __init__(self):
        self.failures = []

    def expect(self, what, want, have):
        ok = want == have
        print("%s %s: %s" % ("ok  " if ok else "FAIL", what, have if ok else "%s, expected %s" % (have, want)))
        if not ok:
            self.failures.append(what)

    def status(self):
        return 1 if self.failures else 0
