#!/usr/bin/env python3
"""bigcounts.py CAPPROF GEN_DUMP WORKDIR -- call counts near 2^64: a dump
whose counts add up past 2^64-1 is refused; counts summed over several dumps
saturate at 2^64-1 instead of wrapping."""
import os, struct, subprocess, sys

capprof, gen, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
base = os.path.join(work, "small.capprof")
subprocess.run([gen, base, "small"], check=True)
data = bytearray(open(base, "rb").read())
table, = struct.unpack_from("<Q", data, 24)
nsec, = struct.unpack_from("<I", data, 16)
nodes_off = None
for i in range(nsec):
    typ, _, off, size = struct.unpack_from("<IIQQ", data, table + 24 * i)
    if typ == 5:
        nodes_off, nnodes = off, size // 48
assert nodes_off is not None and nnodes >= 3, "no nodes"

def with_calls(values, name):
    d = bytearray(data)
    for k, v in values.items():
        struct.pack_into("<Q", d, nodes_off + 48 * k + 16, v)
    path = os.path.join(work, name)
    open(path, "wb").write(d)
    return path

fail = 0
M = 2**64 - 1
# One dump whose counts add past 2^64-1: refused, with the reason.
p = with_calls({1: M, 2: 5}, "over.capprof")
r = subprocess.run([capprof, "report", p], capture_output=True, text=True)
if r.returncode == 0 or "2^64-1" not in r.stderr:
    print("FAIL: a dump whose counts wrap was accepted:", r.stdout[:300], r.stderr); fail = 1
# Two dumps, each below 2^64 in all, together above: the sum saturates.
a = with_calls({k: 0 for k in range(1, nnodes)} | {1: 2**63 + 7}, "a.capprof")
b = with_calls({k: 0 for k in range(1, nnodes)} | {1: 2**63 + 9}, "b.capprof")
wrapped = f" {(2**63 + 7 + 2**63 + 9) % 2**64:,} "
for cmd in (["report", "--sum", "--raw"], ["tree", "--merge-threads", "--raw"]):
    r = subprocess.run([capprof] + cmd + [a, b], capture_output=True, text=True)
    if r.returncode != 0 or "18,446,744,073,709,551,615" not in r.stdout or wrapped in r.stdout:
        print("FAIL:", " ".join(cmd), "did not saturate:\n", r.stdout[:800], r.stderr); fail = 1
print("ok: big counts" if not fail else "")
sys.exit(fail)
