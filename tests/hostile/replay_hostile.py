#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Replays crafted files through gapscope-agent --replay and checks what gapscope-cli capture reports.

    replay_hostile.py --cli gapscope-cli --agent gapscope-agent --dir DIR   (DIR from make_hostile.py)

1. A file whose first chunk is damaged (one flipped bit): the capture must not say "no data lost",
   and must name the replay's lost events (replay_events_lost = the damaged chunk's events, from its
   frame header).
2. --speed 0 --steps 5 on the good file: the recorded file holds exactly 5 steps per rank, as printed.
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_hostile  # noqa: E402


def replay(cli, agent, path, speed, steps, work):
    port_file = os.path.join(work, "port")
    if os.path.exists(port_file):
        os.remove(port_file)
    a = subprocess.Popen([agent, "--replay", path, "--speed", str(speed), "--listen", "127.0.0.1:0", "--port-file",
                          port_file, "--socket", os.path.join(work, "agent.sock"), "--output-dir",
                          os.path.join(work, "out")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if os.path.exists(port_file) and os.path.getsize(port_file):
                break
            time.sleep(0.1)
        port = open(port_file).read().strip()
        out = os.path.join(work, "capture.gapscope")
        r = subprocess.run([cli, "capture", "--agent", "127.0.0.1:" + port, "--steps", str(steps), "--quiet", "-o",
                            out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120, text=True)
        info = subprocess.run([cli, "info", "--json", out], stdout=subprocess.PIPE, text=True, check=True)
        return r, json.loads(info.stdout)
    finally:
        a.terminate()
        a.wait(10)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--agent", required=True)
    ap.add_argument("--dir", required=True)
    a = ap.parse_args()
    failures = []
    good_path = os.path.join(a.dir, "good.gapscope")
    good = open(good_path, "rb").read()
    first = [f for f in make_hostile.frames(good) if f["type"] == make_hostile.CHUNK][0]
    damaged = bytearray(good)
    damaged[first["offset"] + make_hostile.FRAME_HEADER + first["stored"] // 2] ^= 0x10
    with tempfile.TemporaryDirectory(prefix="gapscope-replay-") as work:
        os.chmod(work, 0o700)
        dpath = os.path.join(work, "damaged.gapscope")
        open(dpath, "wb").write(damaged)
        r, info = replay(a.cli, a.agent, dpath, 0, 5, work)
        counters = {c["name"]: c["value"] for c in info["counters"]}
        print(r.stdout.strip())
        if "no data lost" in r.stdout:
            failures.append("damaged replay: capture says 'no data lost'")
        if "replay_events_lost" not in r.stdout:
            failures.append("damaged replay: capture does not name replay_events_lost")
        if counters.get("replay_events_lost") != first["events"]:
            failures.append("damaged replay: replay_events_lost = %s, the damaged chunk held %d"
                            % (counters.get("replay_events_lost"), first["events"]))
        r, info = replay(a.cli, a.agent, good_path, 0, 5, work)
        print(r.stdout.strip())
        if r.returncode != 0 or "5 steps" not in r.stdout:
            failures.append("good replay: capture failed or did not print 5 steps: " + r.stdout + r.stderr)
        if info["step_count"] != 5:
            failures.append("good replay --speed 0 --steps 5 recorded %d steps" % info["step_count"])
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
