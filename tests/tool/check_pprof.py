#!/usr/bin/env python3
"""check_pprof.py CAPPROF PROFILE.pb.gz EXPECT DUMP... -- reads capprof's pprof
export back with 'go tool pprof' and checks it against capprof's own views
of the same DUMPs:
  -raw: per call path (merged over threads) the calls and the samples under
        it equal 'capprof tree --merge-threads'; the call counts equal
        EXPECT ('path;to;f=N,...', '-' for none); a thread label per thread;
  -top -sample_index=cpu: each function's cpu self equals the CSV export's
        cpu_self_ns within 0.1 % and report's printed cpu self to its digits.
Exits non-zero with a message per difference."""
import csv
import re
import subprocess
import sys

capprof, prof, expect, dumps = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
fails = []


def field(line, hdr, name):
    """The value in line under the right-aligned column name of header hdr."""
    end = hdr.index(name) + len(name)
    m = re.search(r"(~?[\d.,]+(?: [num]?s)?%?)$", line[:end])
    if not m:
        raise ValueError(f"no {name} in {line!r}")
    return m.group(1).lstrip("~")


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


# ---- go tool pprof -raw: samples, locations, period ---------------------------
raw = run("go", "tool", "pprof", "-raw", prof)
period = int(re.search(r"^Period: (\d+)$", raw, re.M).group(1))
types = re.search(r"^Samples:\n(.*)$", raw, re.M).group(1).split()
if [t.split("/")[0].replace("[dflt]", "") for t in types] != ["calls", "cpu", "elapsed"]:
    fails.append(f"sample types {types}")
locs = {}
for m in re.finditer(r"^ +(\d+): 0x[0-9a-f]+ M=\d+ (\S+) ", raw.split("\nLocations\n")[1], re.M):
    locs[m.group(1)] = m.group(2)
calls, samples, threads = {}, {}, set()
body = raw.split("\nSamples:\n")[1].split("\nLocations\n")[0]
for m in re.finditer(r"^ +(\d+) +(\d+) +(\d+): ([\d ]+)\n((?: +\w+:\[.*\]\n)*)", body, re.M):
    path = tuple(reversed([locs[i] for i in m.group(4).split()]))
    calls[path] = calls.get(path, 0) + int(m.group(1))
    cpu = int(m.group(2))
    if cpu % period:
        fails.append(f"{';'.join(path)}: cpu {cpu} not a multiple of the period {period}")
    for k in range(1, len(path) + 1):                # samples under each prefix
        samples[path[:k]] = samples.get(path[:k], 0) + cpu // period
    t = re.search(r"thread:\[(.*)\]", m.group(5))
    if not t:
        fails.append(f"{';'.join(path)}: no thread label")
    else:
        threads.add(t.group(1))

# ---- capprof tree --merge-threads: per path calls and samples ----------------
tree = run(capprof, "tree", "--merge-threads", *dumps).splitlines()
hdr = next(i for i, l in enumerate(tree) if l.rstrip().endswith("function") and "calls" in l)
col = tree[hdr].index("function")
tcalls, tsamples, stack = {}, {}, []
for line in tree[hdr + 1:]:
    if len(line) <= col or line.startswith("~") or not line[:col].strip():
        continue
    name = line[col:]
    depth = (len(name) - len(name.lstrip(" "))) // 2
    name = name.strip().split("  (")[0]
    stack[depth:] = [name]
    path = tuple(stack)
    tcalls[path] = tcalls.get(path, 0) + int(field(line, tree[hdr], "calls").replace(",", ""))
    if " samples " in tree[hdr]:
        n = field(line, tree[hdr], "samples")
        tsamples[path] = tsamples.get(path, 0) + int(n.replace(",", ""))
got = {p: c for p, c in calls.items() if c}
want = {p: c for p, c in tcalls.items() if c}
for p in sorted(set(got) | set(want)):
    if got.get(p) != want.get(p):
        fails.append(f"calls of {';'.join(p)}: pprof {got.get(p)}, tree {want.get(p)}")
for p in sorted(set(samples) | set(tsamples)):
    if samples.get(p, 0) != tsamples.get(p, 0):
        fails.append(f"samples under {';'.join(p)}: pprof {samples.get(p, 0)}, "
                     f"tree {tsamples.get(p, 0)}")
if expect != "-":
    for item in expect.split(","):
        path, n = item.rsplit("=", 1)
        if got.get(tuple(path.split(";"))) != int(n):
            fails.append(f"calls of {path}: pprof {got.get(tuple(path.split(';')))}, expected {n}")
nthreads = 0
for d in dumps:
    nthreads += int(re.search(r"^threads: +(\d+)", run(capprof, "info", d), re.M).group(1))
if len(threads) != nthreads:
    fails.append(f"{len(threads)} thread labels {sorted(threads)}, {nthreads} threads")

# ---- -top -sample_index=cpu against the CSV export and report ----------------
top = run("go", "tool", "pprof", "-top", "-sample_index=cpu", "-unit=ns", "-nodefraction=0",
          "-nodecount=100000", prof)
flat = {}
for m in re.finditer(r"^ *(\d+)ns +[\d.]+% +[\d.]+% +\d+ns +[\d.]+% +(\S+)$", top, re.M):
    flat[m.group(2)] = int(m.group(1))
for m in re.finditer(r"^ *0 +0% +[\d.]+% +\d+ns +[\d.]+% +(\S+)$", top, re.M):
    flat[m.group(1)] = 0
rows = list(csv.DictReader(run(capprof, "export", "--format=csv", *dumps).splitlines()))
if not rows:
    fails.append("empty CSV export")
total = 0
for r in rows:
    want, have = float(r["cpu_self_ns"]), flat.get(r["function"], 0)
    total += want
    if abs(have - want) > 0.001 * want:
        fails.append(f"cpu self of {r['function']}: pprof {have} ns, capprof {want:.0f} ns")
if total == 0:
    fails.append("no cpu self at all: the test needs samples")
units = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
cols = ("-F", "cpu-self,cpu-self%,calls", "--width=0")
rep = run(capprof, "report", "--sum", *cols, *dumps).splitlines() if len(dumps) > 1 else \
    run(capprof, "report", *cols, *dumps).splitlines()
rh = next(i for i, l in enumerate(rep) if l.rstrip().endswith("function") and "cpu self" in l)
rcol = rep[rh].index("function")
checked = 0
for line in rep[rh + 1:]:
    if len(line) <= rcol or line.startswith("~") or not line[:rcol].strip():
        continue
    name = line[rcol:].strip().split("  (")[0]
    v = field(line, rep[rh], "cpu self").split()
    shown = float(v[0]) * units[v[1]]
    dec = len(v[0].split(".")[1]) if "." in v[0] else 0
    tol = 0.5 * 10 ** -dec * units[v[1]]        # half a unit of the last digit
    have = flat.get(name, 0)
    if abs(have - shown) > tol + 1e-9:
        fails.append(f"report's cpu self of {name}: {' '.join(v)}, pprof {have} ns")
    checked += 1
if not checked:
    fails.append("no report row read")

for f in fails:
    print("check_pprof:", f)
print(f"check_pprof: {len(got)} paths, {len(threads)} threads, {len(flat)} functions, "
      f"{sum(samples.get(p[:1], 0) for p in samples if len(p) == 1)} samples")
sys.exit(1 if fails else 0)
