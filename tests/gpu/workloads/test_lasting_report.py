#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CI check of lasting_report.py on synthetic timelines (no GPU): the calls are sorted into before /
while / after / torch, each block is divided by the uncaptured twin over the same seconds (so a
machine-wide slowdown cancels), a twin that did not run through every block makes every figure the
process's own, and the verdicts follow the gates."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(HERE, "lasting_report.py")
MS = 1_000_000
T0 = 1_800_000_000_000_000_000


def call(t0, ms, state="idle"):
    return {"t0_ns": t0, "t1_ns": t0 + int(ms * MS), "ms": ms, "state": state}


class Run:
    """A process's calls, 100 ms apart: `plan` is a list of (count, ms, state) blocks; `machine` scales
    every call of process and twin alike from call index `slow_from` on."""

    def __init__(self, folder, plan, twin_from=0, machine=1.0, slow_from=None, counters=None):
        self.folder = folder
        calls, twin, windows = [], [], []
        i = 0
        for count, ms, state in plan:
            first = i
            for _ in range(count):
                f = machine if slow_from is not None and i >= slow_from else 1.0
                calls.append(call(T0 + i * 100 * MS, ms * f, "torch" if state == "torch" else "idle"))
                if i >= twin_from:
                    twin.append(call(T0 + i * 100 * MS, 50.0 * f))
                i += 1
            if state == "capture":
                for c in calls[first:]:
                    c["state"] = "idle"  # the timeline says idle; the window says captured
                windows.append((len(windows) + 1, T0 + first * 100 * MS - 1, T0 + i * 100 * MS - 1,
                                T0 + first * 100 * MS - 1, T0 + i * 100 * MS - 1))
        self.paths = {}
        for name, rows in (("tl", calls), ("twin", twin)):
            p = os.path.join(folder, name + ".jsonl")
            with open(p, "w") as f:
                f.write("\n".join(json.dumps(r) for r in rows) + "\n")
            self.paths[name] = p
        self.paths["win"] = os.path.join(folder, "windows")
        with open(self.paths["win"], "w") as f:
            for w in windows:
                # `counters`: {capture k: the counters of its `info --json`}, written next to the windows.
                info = ""
                if counters and w[0] in counters:
                    info = os.path.join(folder, "cap%d.info.json" % w[0])
                    with open(info, "w") as g:
                        json.dump({"counters": counters[w[0]]}, g)
                f.write(("%d %d %d %d %d" % w) + (" " + info if info else "") + "\n")

    def report(self, *gates, twin=True):
        js = os.path.join(self.folder, "out.json")
        cmd = [sys.executable, REPORT, "case", self.paths["tl"], self.paths["win"], "--json", js] + list(gates)
        if twin:
            cmd += ["--control", self.paths["twin"]]
        r = subprocess.run(cmd, capture_output=True, text=True)
        with open(js) as f:
            return r.returncode, r.stdout, json.load(f)


class TestLastingReport(unittest.TestCase):
    def test_blocks_and_verdicts(self):
        with tempfile.TemporaryDirectory() as d:
            run = Run(d, [(20, 50.0, "idle"), (10, 60.0, "capture"), (20, 50.5, "idle"), (10, 80.0, "torch")])
            rc, out, js = run.report("--gate-after", "2", "--gate-torch")
            self.assertEqual(rc, 0, out)
            self.assertEqual(js["before"]["calls"], 20)
            self.assertAlmostEqual(js["before"]["ms"], 50.0)
            self.assertEqual(js["while"][0]["calls"], 10)
            self.assertAlmostEqual(js["while"][0]["ms"], 60.0)
            self.assertAlmostEqual(js["after"][0]["ms"], 50.5)
            self.assertEqual(js["torch"]["calls"], 9)  # the first torch.profiler call left out
            self.assertTrue(js["control"])
            self.assertIn("| PASS", out.splitlines()[0])
            self.assertIn("+1.0%", out.splitlines()[0])
            # Each block's own median and the twin's over the same seconds, before normalisation.
            rows = [line for line in out.splitlines() if "block by block" in line]
            self.assertEqual(len(rows), 1)
            self.assertIn("before 50.0/50.0, while 1 60.0/50.0, after 1 50.5/50.0, torch 80.0/50.0", rows[0])
            rc, out, js = run.report("--gate-after", "2", twin=False)
            self.assertIn("own ms per call, block by block | before 50.0, while 1 60.0, after 1 50.5, torch 80.0",
                          out)

    def test_lasting_cost_fails_the_gate(self):
        with tempfile.TemporaryDirectory() as d:
            run = Run(d, [(20, 50.0, "idle"), (10, 60.0, "capture"), (20, 56.0, "idle")])
            rc, out, js = run.report("--gate-after", "2")
            self.assertEqual(rc, 1)
            self.assertIn("+12.0%", out)
            self.assertIn("| FAIL", out.splitlines()[0])

    def test_capture_that_left_cupti_attached_says_why(self):
        why = "kernels of CUDA-graph replays were recorded"
        stays = {"name": "cupti_stays_attached", "rank": 0, "value": 1, "severity": "warning", "detail": why}
        other = {"name": "activity_records", "rank": 0, "value": 5, "severity": "info", "detail": "records"}
        with tempfile.TemporaryDirectory() as d:
            run = Run(d, [(20, 50.0, "idle"), (10, 60.0, "capture"), (20, 55.0, "idle"), (10, 60.0, "capture"),
                          (20, 55.0, "idle")], counters={1: [other], 2: [other, stays]})
            rc, out, js = run.report("--gate-after", "2")
            self.assertEqual(rc, 1)
            row = out.splitlines()[0]
            self.assertIn("CUPTI stayed attached after capture 2 (%s)" % why, row)
            self.assertIn("| FAIL", row)
            self.assertEqual(js["cupti_stayed_attached"], {"2": why})
            # A capture that let CUPTI go adds nothing to the row.
            run = Run(d, [(20, 50.0, "idle"), (10, 60.0, "capture"), (20, 50.0, "idle")], counters={1: [other]})
            rc, out, js = run.report("--gate-after", "2")
            self.assertEqual(rc, 0, out)
            self.assertNotIn("stayed attached", out)
            self.assertEqual(js["cupti_stayed_attached"], {})

    def test_machine_slowdown_cancels_against_the_twin(self):
        with tempfile.TemporaryDirectory() as d:
            # Both processes 20 % slower from the capture on: not the capture's cost.
            run = Run(d, [(20, 50.0, "idle"), (10, 50.0, "capture"), (20, 50.0, "idle")], machine=1.2, slow_from=20)
            rc, out, js = run.report("--gate-after", "2")
            self.assertEqual(rc, 0, out)
            # Each block over the twin's median in the same seconds, times the twin's overall median.
            self.assertAlmostEqual(js["after"][0]["ms"], js["before"]["ms"], places=6)
            rc, out, js = run.report("--gate-after", "2", twin=False)
            self.assertEqual(rc, 1)
            self.assertAlmostEqual(js["after"][0]["ms"] / js["before"]["ms"], 1.2, places=6)

    def test_twin_that_started_late_gives_own_medians(self):
        # The twin's first calls come with the last two of the block before: too few to divide by.
        with tempfile.TemporaryDirectory() as d:
            run = Run(d, [(20, 50.0, "idle"), (10, 60.0, "capture"), (20, 55.0, "idle")], twin_from=18)
            rc, out, js = run.report("--gate-after", "2")
            self.assertFalse(js["control"])
            self.assertTrue(js["twin_gap"])
            self.assertAlmostEqual(js["before"]["ms"], 50.0)
            self.assertAlmostEqual(js["after"][0]["ms"], 55.0)
            self.assertIn("own medians", out)
            self.assertNotIn("nan", out)


if __name__ == "__main__":
    unittest.main()
