#!/usr/bin/env python3
"""vs_callgrind.py CAPPROF_CSV CALLGRIND_OUT -- every function capprof saw
must have exactly the call count valgrind's callgrind counted."""
import csv
import re
import sys

cap = {}
for row in csv.DictReader(open(sys.argv[1], newline="")):
    if not row["function"].startswith("["):
        cap[row["function"]] = int(row["calls"])

names, calls = {}, {}
cfn = None
for line in open(sys.argv[2]):
    m = re.match(r"c?fn=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
    if m:
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        if line.startswith("cfn="):
            # callgrind names recursion levels fib'2, fib'3...: one function
            cfn = re.sub(r"'\d+$", "", names[m.group(1)])
        continue
    m = re.match(r"calls=(\d+) ", line)
    if m and cfn is not None:
        calls[cfn] = calls.get(cfn, 0) + int(m.group(1))

bad = 0
for name, n in sorted(cap.items()):
    got = calls.get(name, 0)
    print(f"{name:30} capprof {n:8} callgrind {got:8} {'ok' if got == n else 'MISMATCH'}")
    bad += got != n
if not cap:
    sys.exit("vs_callgrind: capprof saw no functions")
sys.exit(1 if bad else 0)
