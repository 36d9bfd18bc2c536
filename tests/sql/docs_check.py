#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""docs/SQL.md against the code: its tables section is `query --tables` word for word, and every example
query (```sql blocks) runs on each trace given; each returns rows on at least one of them unless its text
says `may be empty`.

Usage: docs_check.py --cli gapscope-cli --doc docs/SQL.md TRACE...
"""
import argparse
import json
import re
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--doc", required=True)
    ap.add_argument("traces", nargs="+")
    a = ap.parse_args()
    doc = open(a.doc, encoding="utf-8").read()
    problems = []
    m = re.search(r"<!-- tables: begin -->\n(.*)<!-- tables: end -->", doc, re.S)
    tables = subprocess.run([a.cli, "query", "--tables"], capture_output=True, text=True, check=True).stdout
    if not m or m.group(1) != tables:
        problems.append("the tables section differs from `gapscope-cli query --tables`")
    examples = re.findall(r"```sql\n(.*?)```", doc, re.S)
    if len(examples) < 10:
        problems.append(f"{len(examples)} example queries, fewer than 10")
    for q in examples:
        rows = []
        for t in a.traces:
            p = subprocess.run([a.cli, "query", "--json", t, q], capture_output=True, text=True)
            if p.returncode != 0:
                problems.append(f"{t}: {q.strip()[:70]}...: exit {p.returncode}: {p.stderr.strip()[:300]}")
                continue
            rows.append(len(json.loads(p.stdout)))
        first = q.strip().splitlines()[0]
        print(f"{rows} rows: {first[:90]}")
        if rows and max(rows) == 0 and "may be empty" not in q:
            problems.append(f"no rows on any trace: {first}")
    for p in problems:
        print("FAIL", p)
    print(f"{len(examples)} examples on {len(a.traces)} traces, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
