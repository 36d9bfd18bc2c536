#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs every gapscope-cli command on each crafted file of make_hostile.py under a memory limit.

    run_hostile.py --cli gapscope-cli --dir DIR [--limit-mb 1024] [--viewer gapscope]

For each case of DIR/manifest.json and each command (info, summary, analyze --threads 8, validate,
convert to .gapscope) it checks: the command ends by itself (no signal, no hang, no "internal
error") with its address space limited to --limit-mb (RLIMIT_AS, as `ulimit -v`) and a peak RSS
below it; the events kept (info --json, and info of the converted file) are the ones the manifest
computed from the surviving chunks; validate fails every broken .gapscope file and passes the good
one; the counters named by the case are reported, and the warning it names (the place of bad input);
paths that are no trace fail with the real error.
With --viewer, the viewer's headless export (offscreen) runs on each case too, under the same limit: it
ends by itself, writes the picture when the case keeps events, and fails with the real error otherwise.
Prints one line per run and exits 1 on any failure.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

TIMEOUT_S = 60


def run(cmd, limit_bytes, cwd):
    """(rc, stdout, stderr, peak RSS bytes, seconds); rc < 0: killed by that signal."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    env = dict(os.environ, MALLOC_ARENA_MAX="2")
    t0 = time.monotonic()
    # Per process: hostile_cli and hostile_viewer run side by side in the same folder.
    out_path, err_path = (os.path.join(cwd, ".%s.%d" % (k, os.getpid())) for k in ("out", "err"))
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, preexec_fn=limit, cwd=cwd,
                             env=env)
        deadline = t0 + TIMEOUT_S
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                p.kill()
                pid, status, usage = os.wait4(p.pid, 0)
                break
            time.sleep(0.02)
        p.returncode = os.waitstatus_to_exitcode(status)
    with open(out_path, "rb") as fh:
        stdout = fh.read().decode(errors="replace")
    with open(err_path, "rb") as fh:
        stderr = fh.read().decode(errors="replace")
    return p.returncode, stdout, stderr, usage.ru_maxrss * 1024, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--limit-mb", type=int, default=1024)
    ap.add_argument("--viewer", help="the gapscope viewer: also run its headless export on each case")
    a = ap.parse_args()
    limit = a.limit_mb << 20
    with open(os.path.join(a.dir, "manifest.json")) as fh:
        manifest = json.load(fh)
    failures = []

    def check(ok, case, what):
        if not ok:
            failures.append("%s: %s" % (case, what))
        return ok

    for case in manifest["cases"]:
        name, f = case["name"], case["file"]
        extra = case.get("args", [])
        converted = "converted-" + name.replace("/", "_") + ".gapscope"
        if not a.viewer and os.path.exists(os.path.join(a.dir, converted)):  # hostile_cli's own file
            os.remove(os.path.join(a.dir, converted))
        commands = {
            "info": ["info", "--json", f],
            "summary": ["summary", f],
            "analyze": ["analyze", "--threads", "8", f],
            "validate": ["validate", f],
            "convert": ["convert", f, converted],
        }
        if a.viewer:  # the CLI commands are hostile_cli's; here only the viewer runs
            commands = {}
        for cmd, args in commands.items():
            rc, out, err, rss, secs = run([a.cli] + args[:1] + extra + args[1:], limit, a.dir)
            label = "%s %s" % (cmd, name)
            print("%-44s rc=%-3d rss=%4d MB %.2f s" % (label, rc, rss >> 20, secs))
            check(rc >= 0, label, "killed by signal %d" % -rc)
            check(secs < TIMEOUT_S, label, "did not finish in %d s" % TIMEOUT_S)
            check("internal error" not in err, label, "internal error: " + err.strip()[-300:])
            check(rss < limit, label, "peak RSS %d MB over the limit" % (rss >> 20))
            if case.get("error"):
                if cmd == "validate" and not f.endswith(".gapscope"):
                    check(rc != 0, label, "validate passes a file that is no .gapscope")
                    continue
                check(rc != 0, label, "exit 0 on a path that is no trace")
                check(case["error"] in err, label, "error does not say '%s': %s" % (case["error"], err.strip()))
                continue
            if cmd == "info":
                if check(rc == 0, label, "exit %d: %s" % (rc, err.strip()[-300:])):
                    info = json.loads(out)
                    if case["kept"] is not None:
                        check(info["event_count"] == case["kept"], label,
                              "kept %d events, the surviving chunks hold %d" % (info["event_count"], case["kept"]))
                    names = {c["name"] for c in info.get("counters", [])}
                    for c in case["expect"]:
                        check(c in names, label, "counter %s not reported (have %s)" % (c, sorted(names)))
                    if case.get("warning"):
                        check(any(case["warning"] in w for w in info.get("warnings", [])), label,
                              "no warning says '%s' (have %s)" % (case["warning"], info.get("warnings", [])[:4]))
            elif cmd == "validate" and case["validate_fails"] is not None:
                want = 1 if case["validate_fails"] else 0
                check(rc == want, label, "exit %d, expected %d" % (rc, want))
            elif cmd == "convert" and case["kept"] is not None:
                if check(rc == 0, label, "exit %d: %s" % (rc, err.strip()[-300:])):
                    rc2, out2, err2, _, _ = run([a.cli, "info", "--json", converted], limit, a.dir)
                    if check(rc2 == 0, label, "converted file does not open: " + err2.strip()):
                        kept = json.loads(out2)["event_count"]
                        check(kept == case["kept"], label,
                              "converted file holds %d events, expected %d" % (kept, case["kept"]))
        if a.viewer:
            png = os.path.join(a.dir, "viewer-" + name.replace("/", "_") + ".png")
            if os.path.exists(png):
                os.remove(png)
            rc, out, err, rss, secs = run([a.viewer, f, "--export-png", png, "--size", "800x600"] + extra, limit,
                                          a.dir)
            label = "viewer %s" % name
            print("%-44s rc=%-3d rss=%4d MB %.2f s" % (label, rc, rss >> 20, secs))
            check(rc >= 0, label, "killed by signal %d" % -rc)
            check(secs < TIMEOUT_S, label, "did not finish in %d s" % TIMEOUT_S)
            check(rss < limit, label, "peak RSS %d MB over the limit" % (rss >> 20))
            if case.get("error"):
                check(rc != 0, label, "exit 0 on a path that is no trace")
                check(case["error"] in err, label, "error does not say '%s': %s" % (case["error"], err.strip()))
            elif case["kept"]:
                check(rc == 0 and os.path.getsize(png) > 0 if os.path.exists(png) else False, label,
                      "no picture (exit %d): %s" % (rc, err.strip()[-300:]))
    for f in failures:
        print("FAIL " + f)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
