#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CI check of capture_report.py's overhead arithmetic on synthetic runs (no GPU): side-by-side
pairs recover a known overhead and core bias through a CPU-speed curve both processes share, the
verdicts follow, and the separate-process comparison reads its figures right."""
import json
import math
import os
import random
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capture_report as cr  # noqa: E402

T0 = 1_700_000_000_000_000_000


def speed(t_s):
    """A CPU-speed curve with swings of up to 1.8x over seconds."""
    return 1.0 + 0.8 * math.sin(t_s / 1.7) ** 2


def steps(n, factor, start_ns, rng, jitter=0.01, base_ms=8.5):
    t, starts, times = start_ns, [], []
    for _ in range(n):
        ms = base_ms * speed((t - T0) / 1e9) * factor * rng.gauss(1.0, jitter)
        starts.append(int(t))
        times.append(ms)
        t += ms * 1e6
    return starts, times


def write_run(folder, tag, kind, starts, times, world=1):
    phase = dict(kind=kind, name=tag, times_ms=times, cpu_ms=times, step_starts_ns=starts)
    with open(os.path.join(folder, "runs", f"{tag}-rank0.json"), "w") as f:
        json.dump(dict(rank=0, world=world, phases=[dict(kind="meet"), phase]), f)


class WindowedRatio(unittest.TestCase):
    def test_common_speed_swings_cancel(self):
        rng = random.Random(3)
        sx, tx = steps(3000, 1.05, T0, rng)
        sy, ty = steps(3000, 1.00, T0 + 2_000_000, rng)
        ratio, se, windows = cr.windowed_ratio(dict(step_starts_ns=sx, times_ms=tx), dict(step_starts_ns=sy, times_ms=ty))
        self.assertAlmostEqual(ratio, 1.05, delta=0.005)
        self.assertLess(se, 0.005)
        self.assertGreater(len(windows), 40)

    def test_no_overlap_is_none(self):
        rng = random.Random(4)
        sx, tx = steps(200, 1.0, T0, rng)
        sy, ty = steps(200, 1.0, T0 + 60_000_000_000, rng)
        self.assertIsNone(cr.windowed_ratio(dict(step_starts_ns=sx, times_ms=tx), dict(step_starts_ns=sy, times_ms=ty)))


class SideBySide(unittest.TestCase):
    def run_sets(self, idle, cap, prof, bias=1.03, sets=2):
        rng = random.Random(11)
        d = tempfile.mkdtemp(prefix="capture-report-")
        os.makedirs(os.path.join(d, "runs"))
        roles = dict(base=(1.0, "idle"), inj=(idle, "idle"), cap=(cap, "capture"), prof=(prof, "profile"))
        for s in range(1, sets + 1):
            start = T0 + s * 200_000_000_000
            for letter, xr, yr in (("a", "base", "base"), ("b", "inj", "base"), ("c", "base", "inj"),
                                   ("d", "cap", "base"), ("e", "prof", "base")):
                fx, kx = roles[xr]
                fy, ky = roles[yr]
                write_run(d, f"side{s}-{letter}-x{xr}", kx, *steps(2500, fx * bias, start, rng))
                write_run(d, f"side{s}-{letter}-y{yr}", ky, *steps(2500, fy, start + 1_000_000, rng))
        rep = cr.Report(os.path.join(d, "table.txt"))
        bench = {}
        cr.side_by_side(rep, bench, d)
        return rep, bench

    def test_recovers_overheads(self):
        rep, bench = self.run_sets(idle=1.004, cap=1.10, prof=1.40)
        idle = bench["side_by_side_idle"]
        self.assertAlmostEqual(idle["overhead_pct"], 0.4, delta=0.25)
        self.assertLess(idle["noise_pct"], 0.5)
        self.assertAlmostEqual(idle["sets"][0]["a"], 1.03, delta=0.005)
        capture = bench["side_by_side_capture"]
        self.assertAlmostEqual(capture["capturing_pct"], 10.0, delta=0.6)
        self.assertAlmostEqual(capture["profiler_pct"], 40.0, delta=1.5)
        self.assertTrue(rep.rows[0].endswith("PASS"), rep.rows[0])  # 0.4 % idle: within 0.5 %
        self.assertTrue(rep.rows[1].endswith("PASS"), rep.rows[1])  # capturing below torch.profiler

    def test_fails_what_it_should(self):
        rep, bench = self.run_sets(idle=1.03, cap=1.50, prof=1.20)
        self.assertAlmostEqual(bench["side_by_side_idle"]["overhead_pct"], 3.0, delta=0.3)
        self.assertTrue(rep.rows[0].endswith("FAIL"), rep.rows[0])  # 3 % idle overhead
        self.assertTrue(rep.rows[1].endswith("FAIL"), rep.rows[1])  # capturing above torch.profiler

    def test_missing_pair_is_reported(self):
        d = tempfile.mkdtemp(prefix="capture-report-")
        os.makedirs(os.path.join(d, "runs"))
        rng = random.Random(5)
        write_run(d, "side1-b-xinj", "idle", *steps(500, 1.0, T0, rng))
        write_run(d, "side1-b-ybase", "idle", *steps(500, 1.0, T0, rng))
        rep = cr.Report(os.path.join(d, "table.txt"))
        cr.side_by_side(rep, {}, d)
        self.assertEqual(len(rep.rows), 1)
        self.assertIn("base|base pair | missing", rep.rows[0])
        self.assertTrue(rep.rows[0].endswith("FAIL"))


class SeparateProcesses(unittest.TestCase):
    def test_idle_vs_not_injected(self):
        def ranks(times):
            return [dict(rank=0, phases=[dict(kind="idle", times_ms=times)])]
        rep = cr.Report(os.path.join(tempfile.mkdtemp(prefix="capture-report-"), "table.txt"))
        base = [("graph-base", ranks([11.9] * 300)), ("graph-base2", ranks([11.92] * 300))]
        inj = [("graph-inj", ranks([11.93] * 300)), ("graph-inj2", ranks([11.95] * 300))]
        fig = cr.idle_vs_not_injected(rep, "graph", base, inj)
        self.assertAlmostEqual(fig["not_injected_ms"], 11.91, places=6)
        self.assertAlmostEqual(fig["injected_idle_ms"], 11.94, places=6)
        self.assertAlmostEqual(fig["idle_pct"], 100.0 * 0.03 / 11.91, places=6)
        self.assertTrue(rep.rows[0].endswith("PASS"), rep.rows[0])


if __name__ == "__main__":
    unittest.main()
