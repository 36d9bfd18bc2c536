#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The HTML reports (model/export/htmlreport.h) in a real browser: `report` of the bundled sample and
`diff --gate --html` of a synth pair whose B has one class 10% slower are checked to be self-contained (no
script, no resource from elsewhere), then rendered by headless Chromium to PNG, and the pictures are
read back pixel by pixel: the waterfall's budget, gap and measured bars, the coverage badges, the
ranks' bars and, for the diff, the regression badge and A's and B's bars are on the page, in the
colours the report gives them, at plausible sizes.

With --viewer, the viewer's `--export-html` of the sample must give the same coverage, findings and
kernels as the CLI's report.

Usage: report_check.py --cli gapscope-cli --sample SAMPLE.gapscope --work DIR [--viewer gapscope]
Exit 0 when all hold, 1 otherwise, 77 when Chromium is not installed (skipped).
"""
import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib

COLOURS = {"budget": (0x4e, 0x79, 0xa7), "gap": (0xe1, 0x57, 0x59), "less": (0x59, 0xa1, 0x4f),
           "measured": (0x9c, 0x75, 0x5f), "wait": (0xf2, 0x8e, 0x2b), "ok": (0x2e, 0x7d, 0x32),
           "warn": (0xb2, 0x6a, 0x00), "bad": (0xc6, 0x28, 0x28)}


def read_png(path):
    """RGB(A) pixels of an 8-bit PNG as (width, height, channels, bytes)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), f"PNG depth {depth} colour type {ctype}"
            ch = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * ch
    out = bytearray(h * stride)
    prev = bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(ch, stride):
                line[i] = (line[i] + line[i - ch]) & 255
        elif f == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 255
        elif f == 3:
            for i in range(stride):
                left = line[i - ch] if i >= ch else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - ch] if i >= ch else 0
                b = prev[i]
                c = prev[i - ch] if i >= ch else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out[y * stride:(y + 1) * stride] = line
        prev = line
    return w, h, ch, bytes(out)


def colour_counts(png):
    w, h, ch, px = png
    counts = {k: 0 for k in COLOURS}
    rows = {k: set() for k in COLOURS}
    lookup = {v: k for k, v in COLOURS.items()}
    for y in range(h):
        base = y * w * ch
        for x in range(0, w * ch, ch):
            k = lookup.get((px[base + x], px[base + x + 1], px[base + x + 2]))
            if k:
                counts[k] += 1
                rows[k].add(y)
    return counts, {k: len(v) for k, v in rows.items()}


def render(chromium, html, png, height):
    p = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--force-device-scale-factor=1", f"--window-size=1000,{height}", f"--screenshot={png}",
                        "file://" + os.path.abspath(html)], capture_output=True, text=True, timeout=120)
    if p.returncode != 0 or not os.path.exists(png):
        raise RuntimeError(f"chromium failed ({p.returncode}): {p.stderr[-400:]}")


def self_contained(html):
    text = open(html, encoding="utf-8").read()
    bad = [m.group(0) for m in re.finditer(r"<script|<link|<img|<iframe|@import|url\(|src=|href=", text)]
    other = [u for u in re.findall(r"https?://[^\"'\s<>]+", text) if u != "http://www.w3.org/2000/svg"]
    return bad + other


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--sample", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--viewer", help="the viewer: its --export-html must write the same coverage and findings")
    a = ap.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not chromium:
        print("Chromium not installed: skipped")
        return 77
    os.makedirs(a.work, exist_ok=True)
    problems = []

    def expect(what, ok, detail=""):
        print(f"{'ok  ' if ok else 'FAIL'} {what} {detail}")
        if not ok:
            problems.append(what)

    one = os.path.join(a.work, "report.html")
    subprocess.run([a.cli, "report", a.sample, "--html", one], check=True, capture_output=True)
    expect("report: self-contained", not self_contained(one), str(self_contained(one)))
    pa, pb = os.path.join(a.work, "a.gapscope"), os.path.join(a.work, "b.gapscope")
    shape = ["--ranks", "2", "--steps", "40", "--kernels-per-step", "150"]
    subprocess.run([a.cli, "synth", *shape, "--seed", "3", "-o", pa], check=True, capture_output=True)
    subprocess.run([a.cli, "synth", *shape, "--seed", "4", "--slow-class", "routed_experts", "--slow-factor", "1.1",
                    "-o", pb], check=True, capture_output=True)
    two = os.path.join(a.work, "diff.html")
    rc = subprocess.run([a.cli, "diff", "--gate", "--html", two, pa, pb], capture_output=True).returncode
    expect("diff --gate: a regression (exit 1)", rc == 1, f"exit {rc}")
    expect("diff report: self-contained", not self_contained(two), str(self_contained(two)))

    png = os.path.join(a.work, "report.png")
    render(chromium, one, png, 2400)
    counts, rows = colour_counts(read_png(png))
    print("report colours (pixels / rows):", {k: (counts[k], rows[k]) for k in counts})
    # The waterfall: budget bars, gap bars (the sample runs well above its budget) and the measured step,
    # the widest bar; the ranks: 2 bars of the measured colour; the coverage table: ok badges, a warn.
    expect("waterfall budget bars drawn", rows["budget"] >= 2 * 12 and counts["budget"] > 1000)
    expect("waterfall gap bars drawn", rows["gap"] >= 5 * 12 and counts["gap"] > 5000)
    expect("measured step and ranks drawn", rows["measured"] >= 3 * 12 and counts["measured"] > 3 * 12 * 400)
    expect("coverage badges drawn", counts["ok"] > 300 and counts["warn"] > 50)

    png = os.path.join(a.work, "diff.png")
    render(chromium, two, png, 1800)
    counts, rows = colour_counts(read_png(png))
    print("diff colours (pixels / rows):", {k: (counts[k], rows[k]) for k in counts})
    expect("the regression badge drawn", counts["bad"] > 300)
    expect("A's bars and B's bars drawn", counts["budget"] > 2000 and counts["gap"] + counts["less"] > 2000)
    expect("no-change badges drawn", counts["ok"] > 1000)
    if a.viewer:
        mine = os.path.join(a.work, "viewer.html")
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
        subprocess.run([a.viewer, a.sample, "--export-html", mine], check=True, capture_output=True, env=env)

        def section(path, name):
            text = open(path, encoding="utf-8").read()
            i = text.index("<h2>" + name)
            return text[i:text.index("<h2>", i + 4)]
        # The viewer sets its waterfall against the budget's achievable column by default.
        cli = os.path.join(a.work, "report_achievable.html")
        subprocess.run([a.cli, "report", "--achievable", a.sample, "--html", cli], check=True, capture_output=True)
        for name in ["Coverage", "Findings", "Kernels by own time"]:
            expect(f"viewer --export-html: {name} as the CLI's report --achievable", section(mine, name) == section(cli, name))
        expect("viewer report: self-contained", not self_contained(mine))
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
