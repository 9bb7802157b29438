#!/usr/bin/env python3
"""check_exports.py KIND FILE -- structural checks of capprof's exports:
json (the documented schema), speedscope (file format, balanced events),
csv (header, quoting), folded (line syntax). Exits non-zero with a message."""
import csv
import json
import re
import sys

kind, path = sys.argv[1], sys.argv[2]


def fail(msg):
    sys.exit(f"check_exports: {kind}: {msg}")


TIMES = ["incl_ns", "excl_ns", "min_ns", "max_ns"]
TIMES += [t + "_raw" for t in TIMES]

if kind == "json":
    d = json.load(open(path))
    for f in d["functions"]:
        for k in ["name", "module", "file", "line", "calls"] + TIMES:
            if k not in f:
                fail(f"function lacks {k}: {f}")
    if not d["threads"]:
        fail("no threads")
    for t in d["threads"]:
        assert "tid" in t and "name" in t
        ids = set()
        for n in t["nodes"]:
            for k in ["id", "parent", "name", "module", "calls"] + TIMES:
                if k not in n:
                    fail(f"node lacks {k}")
            if n["parent"] is not None and n["parent"] not in ids:
                fail(f"node {n['id']}: parent {n['parent']} not listed before it")
            if n["excl_ns"] > n["incl_ns"] + 1 or n["incl_ns"] > n["incl_ns_raw"] + 1:
                fail(f"node {n['id']}: times out of order")
            ids.add(n["id"])
elif kind == "speedscope":
    d = json.load(open(path))
    if d["$schema"] != "https://www.speedscope.app/file-format-schema.json":
        fail("bad $schema")
    frames = d["shared"]["frames"]
    if not d["profiles"]:
        fail("no profiles")
    for p in d["profiles"]:
        if p["type"] != "evented" or p["unit"] != "nanoseconds":
            fail("not an evented ns profile")
        stack, at = [], p["startValue"]
        for e in p["events"]:
            if e["at"] < at:
                fail("events go back in time")
            at = e["at"]
            if not 0 <= e["frame"] < len(frames):
                fail("frame index out of range")
            if e["type"] == "O":
                stack.append(e["frame"])
            elif not stack or stack.pop() != e["frame"]:
                fail("close event does not match the open one")
        if stack or at > p["endValue"]:
            fail("unbalanced events")
elif kind == "csv":
    rows = list(csv.reader(open(path, newline="")))
    if rows[0][:5] != ["function", "module", "file", "line", "calls"]:
        fail(f"bad header {rows[0]}")
    if len(rows) < 2 or any(len(r) != len(rows[0]) for r in rows):
        fail("ragged rows")
elif kind == "folded":
    lines = open(path).read().splitlines()
    if not lines:
        fail("empty")
    for l in lines:
        if not re.fullmatch(r"[^;\n]+(;[^;\n]+)* \d+", l):
            fail(f"bad line {l!r}")
else:
    fail("unknown kind")
