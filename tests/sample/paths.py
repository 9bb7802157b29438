#!/usr/bin/env python3
"""paths.py CAPPROF DUMP [both] -- tests/sample/paths.c's known per-path counts in
the default run, from `capprof export --format=json` and `capprof tree`.
Exit 0 when every count is exact; 77 (skip) when nothing was unhooked
because the run was not sampled. "both": the chain must be unhooked
whole (GCC's hooks)."""
import json
import re
import subprocess
import sys

capprof, dump = sys.argv[1], sys.argv[2]
doc = json.loads(subprocess.run([capprof, "export", "--format=json", dump], check=True,
                                capture_output=True, text=True).stdout)
tree = subprocess.run([capprof, "tree", dump], check=True, capture_output=True,
                      text=True).stdout


def fail(msg):
    print("FAIL: " + msg)
    print(tree)
    sys.exit(1)


funcs = {f["id"]: f for f in doc["functions"]}
unhooked = {f["name"] for f in doc["functions"] if f.get("unhooked_ns")}
print("unhooked:", sorted(unhooked))
if not unhooked:
    print("SKIP: nothing unhooked (the run was not sampled: perf_event_open refused?)")
    sys.exit(77)
for need in ("leaf_a", "chain_g"):
    if need not in unhooked:
        fail("%s was not unhooked" % need)
for keep in ("mid", "warm"):
    if keep in unhooked:
        fail("%s (4 us a call) was unhooked" % keep)

# every path of the main thread: "main;mid;leaf_a" -> (calls, caller_unhooked)
nodes = doc["threads"][0]["nodes"]
byid = {n["id"]: n for n in nodes}
paths = {}
for n in nodes:
    p, k = [], n
    while k is not None:
        p.append(k["name"])
        k = byid.get(k["parent"]) if k["parent"] is not None else None
    key = ";".join(reversed(p))
    calls, via = paths.get(key, (0, False))
    paths[key] = (calls + n["calls"], via or n.get("caller_unhooked", False))

want = {
    "main;warm": 20000, "main;warm;leaf_a": 20000,
    "main;mid": 12345, "main;mid;leaf_a": 12345,
    "main;rec" + ";rec" * 10 + ";leaf_a": 100,
    "main;chain_f": 30000,
}
for path, calls in want.items():
    got = paths.get(path, (0, False))[0]
    print("%-40s %6d (want %d)" % (path, got, calls))
    if got != calls:
        fail("%s: %d calls, the program made %d" % (path, got, calls))
    if paths[path][1]:
        fail("%s marked caller_unhooked: its caller kept its hooks" % path)
for path in paths:
    if path.endswith("leaf_a") and path not in want:
        fail("leaf_a counted on a path it was never called on: %s" % path)

# The chain. Both unhooked (GCC's hooks: chain_f loses its hooks once its
# only callee has): chain_g's calls are on main;chain_f;chain_g while
# chain_f kept its hooks (at least its first 10,000), the rest on
# main;chain_g, the nearest hooked caller's path, marked caller_unhooked:
# 30,000 in all, never fewer. chain_f keeping its hooks (Clang's
# -finstrument-functions-after-inlining: it stays throttled): all 30,000 on
# main;chain_f;chain_g, unmarked.
via_f = paths.get("main;chain_f;chain_g", (0, False))
direct = paths.get("main;chain_g", (0, False))
both = "chain_f" in unhooked
if len(sys.argv) > 3 and sys.argv[3] == "both" and not both:
    fail("chain_f kept its hooks with GCC's hooks: the chain was not unhooked whole")
print("chain (%s): main;chain_f;chain_g %d, main;chain_g %d [caller unhooked: %s]"
      % ("both unhooked" if both else "chain_f hooked", via_f[0], direct[0], direct[1]))
if via_f[0] + direct[0] != 30000:
    fail("chain_g: %d + %d calls, the program made 30000" % (via_f[0], direct[0]))
if via_f[1]:
    fail("main;chain_f;chain_g marked caller_unhooked")
if both:
    if via_f[0] < 10000 or direct[0] == 0:
        fail("chain_g: %d under chain_f, %d under main: chain_f unhooked too early or never"
             % (via_f[0], direct[0]))
    if not direct[1]:
        fail("main;chain_g not marked caller_unhooked")
    if "[caller unhooked]" not in tree:
        fail("tree does not mark main;chain_g [caller unhooked]")
elif direct[0]:
    fail("chain_g counted under main though chain_f kept its hooks")

# tree shows the same counts and the mark
for name, calls in (("mid", "12,345"), ("warm", "20,000"), ("chain_f", "30,000")):
    if not re.search(r"^\s*%s\s.*\b%s\b" % (re.escape(calls), name), tree, re.M):
        fail("tree: no line with %s calls of %s" % (calls, name))
leaf_lines = [l for l in tree.splitlines() if re.search(r"\bleaf_a\b", l)]
for calls in ("20,000", "12,345", "100"):
    if not any(re.match(r"^\s*%s\s" % calls, l) for l in leaf_lines):
        fail("tree: no leaf_a line with %s calls" % calls)
print("ok: per-path counts exact")
