#!/usr/bin/env python3
"""check_exports.py KIND FILE -- structural checks of capprof's exports:
json (docs/capprof-profile.schema.json and more), speedscope (file format, balanced events),
csv (header, quoting), folded (line syntax). Exits non-zero with a message."""
import csv
import json
import os
import re
import sys

kind, path = sys.argv[1], sys.argv[2]


def fail(msg):
    sys.exit(f"check_exports: {kind}: {msg}")


TIMES = ["self_ns", "incl_ns", "self_per_call_ns", "incl_per_call_ns", "incl_min_ns",
         "incl_max_ns"]
TIMES += [t + "_raw" for t in TIMES]


def check_order(what, t, sfx):
    """One call lies between the shortest and the longest, and no call
    lasts longer than all of them together."""
    lo, avg, hi = t["incl_min_ns" + sfx], t["incl_per_call_ns" + sfx], t["incl_max_ns" + sfx]
    if t["calls"] and not lo <= avg + 1 <= hi + 2:
        fail(f"{what}: incl_min{sfx} {lo}, incl_per_call {avg}, incl_max {hi} out of order")


SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                      "capprof-profile.schema.json")
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def validate(v, s, where="$"):
    """The part of JSON Schema docs/capprof-profile.schema.json uses: type,
    const, enum, minimum, required, properties, additionalProperties, items."""
    if "const" in s and v != s["const"]:
        fail(f"{where}: {v!r} is not {s['const']!r}")
    if "enum" in s and v not in s["enum"]:
        fail(f"{where}: {v!r} not in {s['enum']}")
    if "type" in s:
        ok = False
        for t in s["type"] if isinstance(s["type"], list) else [s["type"]]:
            if t == "integer":
                ok |= isinstance(v, int) and not isinstance(v, bool)
            elif t == "number":
                ok |= isinstance(v, (int, float)) and not isinstance(v, bool)
            else:
                ok |= isinstance(v, TYPES[t]) and (t != "null" or v is None)
        if not ok:
            fail(f"{where}: {v!r} is not {s['type']}")
    if "minimum" in s and v < s["minimum"]:
        fail(f"{where}: {v} below {s['minimum']}")
    if isinstance(v, dict):
        for k in s.get("required", []):
            if k not in v:
                fail(f"{where}: lacks {k}")
        props = s.get("properties", {})
        for k, x in v.items():
            if k in props:
                validate(x, props[k], f"{where}.{k}")
            elif s.get("additionalProperties") is False:
                fail(f"{where}: {k} is not in the schema")
    if isinstance(v, list) and "items" in s:
        for i, x in enumerate(v):
            validate(x, s["items"], f"{where}[{i}]")


if kind == "json":
    d = json.load(open(path))
    validate(d, json.load(open(SCHEMA)))
    if d["version"] != 2:
        fail("version is not 2")
    if d.get("weight") not in ("cpu", "elapsed", "calls") or not d.get("weight_total", -1) >= 0:
        fail("no weight or weight_total")
    funcs = {}
    for f in d["functions"]:
        for k in ["id", "name", "module", "file", "line", "calls", "weight_self", "weight_incl"] + TIMES:
            if k not in f:
                fail(f"function lacks {k}: {f}")
        if f["id"] in funcs:
            fail(f"function id {f['id']} twice")
        funcs[f["id"]] = f
        for sfx in ("", "_raw"):
            check_order(f"function {f['name']}", f, sfx)
    if not d["threads"]:
        fail("no threads")
    for t in d["threads"]:
        assert "tid" in t and "name" in t
        if not 0 <= t["dump"] < len(d["dumps"]):
            fail(f"thread {t['tid']}: dump {t['dump']} not in dumps")
        ids = {}
        for n in t["nodes"]:
            for k in ["id", "parent", "function", "name", "module", "calls", "weight_self",
                      "weight_incl"] + TIMES:
                if k not in n:
                    fail(f"node lacks {k}")
            # referential integrity: every id a node names resolves
            if n["function"] not in funcs:
                fail(f"node {n['id']}: function {n['function']} not in functions")
            if funcs[n["function"]]["name"] != n["name"]:
                fail(f"node {n['id']}: name differs from its function's")
            if n["parent"] is not None and n["parent"] not in ids:
                fail(f"node {n['id']}: parent {n['parent']} not listed before it")
            if n["id"] in ids:
                fail(f"node id {n['id']} twice")
            if n["self_ns"] > n["incl_ns"] + 1 or n["incl_ns"] > n["incl_ns_raw"] + 1:
                fail(f"node {n['id']}: times out of order")
            if n["incl_max_ns"] > t["incl_ns"] + 1 or n["incl_max_ns_raw"] > t["incl_ns_raw"] + 1:
                fail(f"node {n['id']}: one call longer than its thread")
            if n["parent"] is not None:
                up = ids[n["parent"]]
                if n["incl_max_ns"] > up["incl_max_ns"] + 1:
                    fail(f"node {n['id']}: a call longer than its caller's longest")
            for sfx in ("", "_raw"):
                check_order(f"node {n['id']}", n, sfx)
            ids[n["id"]] = n
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
    h = rows[0]
    if h[:4] != ["function", "module", "file", "line"] or "calls" not in h or \
            not re.fullmatch(r"(cpu|elapsed)_self_pct|calls_pct", h[4]) or \
            not re.fullmatch(r"(cpu|elapsed|calls)_incl_pct", h[5]):
        fail(f"bad header {rows[0]}")
    if len(rows) < 2 or any(len(r) != len(rows[0]) for r in rows):
        fail("ragged rows")
    # sorted by the ranking figure's share, as report is; no share above 100
    selfs = [float(r[4]) for r in rows[1:]]
    if selfs != sorted(selfs, reverse=True):
        fail(f"rows not sorted by {h[4]}")
    if any(not 0 <= float(r[c]) <= 100 for r in rows[1:] for c in (4, 5)):
        fail("a share outside 0-100")
    if h[4] == "elapsed_self_pct":
        col = h.index("self_ns")
        selfs = [float(r[col]) for r in rows[1:]]
        if selfs != sorted(selfs, reverse=True):
            fail("rows not sorted by self_ns")
elif kind == "folded":
    lines = open(path).read().splitlines()
    if not lines:
        fail("empty")
    for l in lines:
        if not re.fullmatch(r"[^;\n]+(;[^;\n]+)* \d+", l):
            fail(f"bad line {l!r}")
else:
    fail("unknown kind")
