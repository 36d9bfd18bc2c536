#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Damaged Kineto files for the importer's CLI tests, made from the real rank-1 fixture:

- fixtures/kineto/truncated.json.gz: rank1.json.gz's text cut in the middle of a trace event (a whole
  gzip stream of an incomplete JSON document: the JSON ends early, not the compression), with one event
  of an unknown category ("my_custom_cat") put first, so both the truncation warning and the unknown
  kind counter show;
- fixtures/kineto/malformed.json: the first 8 events of rank1 with a comma missing between two fields of
  the 6th one (the error's byte offset is checked by the test).

Usage: make_bad_fixtures.py  (run from anywhere; writes next to the other fixtures)
"""
import gzip
import os

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "kineto")
UNKNOWN = ('  {\n    "ph": "X", "cat": "my_custom_cat", "name": "custom", "pid": 832, "tid": 832,\n'
           '    "ts": 5154603789650.385, "dur": 1.0\n  },\n')


def events_start(text):
    i = text.index('"traceEvents": [') + len('"traceEvents": [')
    return text.index("\n", i) + 1


def main():
    with gzip.open(os.path.join(HERE, "rank1.json.gz"), "rt") as f:
        text = f.read()
    start = events_start(text)
    cut = text.index('"args"', len(text) // 2)  # inside an event: what parsed before it is kept
    truncated = text[:start] + UNKNOWN + text[start:cut]
    with open(os.path.join(HERE, "truncated.json.gz"), "wb") as f:
        f.write(gzip.compress(truncated.encode(), 9, mtime=0))

    ends = []
    i = start
    for _ in range(8):
        i = text.index("\n  },\n", i) + len("\n  },")
        ends.append(i)
    body = text[:ends[-1]].rstrip(",") + "\n  ]\n}\n"
    sixth = body.index('"ts"', ends[4])  # the 6th event's "ts" field
    comma = body.rindex(",", 0, sixth)
    malformed = body[:comma] + body[comma + 1:]
    with open(os.path.join(HERE, "malformed.json"), "w") as f:
        f.write(malformed)
    print("malformed.json: comma removed at byte", comma)


if __name__ == "__main__":
    main()
