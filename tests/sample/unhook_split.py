#!/usr/bin/env python3
"""unhook_split.py CAPPROF DUMP -- tests/sample/unhook_split.c: f, unhooked
by thread A before thread B first calls it, gets at least 70 % of B's
samples, and each thread's calls of f are exact."""
import json
import subprocess
import sys

capprof, dump = sys.argv[1], sys.argv[2]
doc = json.loads(subprocess.run([capprof, "export", "--format=json", dump], check=True,
                                capture_output=True, text=True).stdout)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


f = [x for x in doc["functions"] if x["name"] == "f"]
sampling = [d.get("sampling") for d in doc["dumps"]]
if not any(s and not s.get("failed") and s.get("samples") for s in sampling):
    print("SKIP: the run was not sampled (perf_event_open refused?): %r" % sampling)
    sys.exit(77)
if not f or not f[0].get("unhooked_ns"):
    fail("f was not unhooked")
threads = {}
for t in doc["threads"]:
    names = {n["name"] for n in t["nodes"]}
    if "a_loop" in names:
        threads["A"] = t
    if "b_loop" in names:
        threads["B"] = t
if set(threads) != {"A", "B"}:
    fail("threads A and B not both in the dump")
for name, want in (("A", 60000), ("B", 4000000)):
    calls = sum(n["calls"] for n in threads[name]["nodes"] if n["name"] == "f")
    print("thread %s: f %d calls (program: %d)" % (name, calls, want))
    if calls != want:
        fail("thread %s: f has %d calls, the program made %d" % (name, calls, want))
b = threads["B"]["nodes"]
total = sum(n["self_samples"] for n in b)
in_f = sum(n["self_samples"] for n in b if n["name"] == "f")
print("thread B: %d samples, %d in f (%.1f %%)" % (total, in_f, 100.0 * in_f / max(total, 1)))
if total < 50:
    fail("only %d samples in thread B" % total)
if in_f * 10 < total * 7:
    fail("f has %d of thread B's %d samples: under 70 %%" % (in_f, total))
print("ok: unhook_split")
