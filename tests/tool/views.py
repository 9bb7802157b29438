#!/usr/bin/env python3
"""views.py CAPPROF CXX RUNTIME_LIB WORKDIR -- every view of one sampled run
tells report's story (issue 36).

Builds tests/tool/views.cpp with -finstrument-functions, runs it with the
default settings (sampled through the hooks' ring buffer on Linux) and
exports every format: folded, callgrind (and callgrind_annotate's reading of
it when valgrind is installed), speedscope, JSON, CSV, the HTML page's data
(its flat table and its icicle's widths), plus tree and callers. Each view's
per-function share of the ranking figure (cpu) is compared with report's
cpu self% (cpu incl% for tree and callers) for every function of 0.5 % or
more, within report's rounding. Also: report on this C++ dump fits 80
columns, gives each name at least 40 of them and prints at most two header
lines; no share anywhere is above 100 %.

When the default run is not sampled (perf_event_open refused: a seccomp'd
container, perf_event_paranoid above 2), the run is repeated with
CAPPROF_SAMPLE=time:250us, which falls back to a CPU-time timer; when even
that yields no samples the test is skipped (exit 77) with the reason.
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict

CAPPROF, CXX, LIB, W = sys.argv[1:5]
HERE = os.path.dirname(os.path.abspath(__file__))
fails = []


def fail(msg):
    fails.append(msg)
    print("FAIL: " + msg)


def run(*args, env=None):
    return subprocess.run(args, check=True, capture_output=True, text=True, env=env).stdout


shutil.rmtree(W, ignore_errors=True)
os.makedirs(W)
os.chdir(W)
run(CXX, "-O2", "-g", "-fno-omit-frame-pointer", "-fno-optimize-sibling-calls",
    "-finstrument-functions", os.path.join(HERE, "views.cpp"), LIB, "-lpthread",
    "-Wl,-rpath," + os.path.dirname(os.path.abspath(LIB)), "-o", "views")

env = {k: v for k, v in os.environ.items() if not k.startswith("CAPPROF_")}
env["CAPPROF_OUTPUT"] = "v.capprof"
run("./views", env=env)
doc = json.loads(run(CAPPROF, "export", "--format=json", "v.capprof"))
if doc["weight"] != "cpu":
    why = [ln for ln in run(CAPPROF, "report", "v.capprof").splitlines() if "sampling" in ln]
    print("the default run was not sampled (%s); again with CAPPROF_SAMPLE=time:250us"
          % (why[0] if why else "no samples charged to call paths"))
    env["CAPPROF_SAMPLE"] = "time:250us"
    os.remove("v.capprof")
    run("./views", env=env)
    doc = json.loads(run(CAPPROF, "export", "--format=json", "v.capprof"))
    if doc["weight"] != "cpu":
        print("SKIP: no samples in this environment (perf_event_open and the CPU-time timer "
              "both unavailable)")
        sys.exit(77)
D = "v.capprof"

# ---- report: the reference -------------------------------------------------------
SUFFIX = re.compile(r"^(.*?)(  \([^()]*\))?(  \[(?:unhooked|throttled|zone)\])?$")


def strip(name):
    return SUFFIX.match(name).group(1)


rep_self, rep_incl = {}, {}
for ln in run(CAPPROF, "report", "-q", "--width=0", "--full-names", "-F",
              "cpu-self%,cpu-incl%", D).splitlines()[1:]:
    m = re.match(r"^\s*([\d.]+)%\s+([\d.]+)%  (.*)$", ln)
    if not m:
        break                                     # the [unhooked] notes after the table
    name = strip(m.group(3))
    rep_self[name], rep_incl[name] = float(m.group(1)), float(m.group(2))
    if rep_incl[name] > 100 or rep_self[name] > 100:
        fail("report: a share above 100 %%: %s" % ln)
big = {n: s for n, s in rep_self.items() if s >= 0.5}
print("report, cpu self%% of 0.5 %% or more: %s" %
      ", ".join("%s %.1f" % (n, s) for n, s in sorted(big.items(), key=lambda x: -x[1])))
if len(big) < 3 or "spin(unsigned long)" not in big:
    fail("report: too few functions to compare (%s)" % big)


def compare(view, shares, ref=None, tol=0.051):
    """shares: name -> percent; every function of report's 0.5 % or more."""
    ref = ref or big
    bad = []
    for n, want in ref.items():
        got = shares.get(n, 0.0)
        if abs(got - want) > tol:
            bad.append("%s: %.3f, report %.1f" % (n, got, want))
    if any(v > 100.0001 for v in shares.values()):
        bad.append("a share above 100 %")
    if bad:
        fail("%s disagrees with report: %s" % (view, "; ".join(bad)))
    else:
        print("ok: %s (%d functions)" % (view, len(ref)))


# ---- JSON, CSV ----------------------------------------------------------------------
tot = doc["weight_total"]
compare("json", {f["name"]: 100.0 * f["weight_self"] / tot for f in doc["functions"]})
run(CAPPROF, "export", "--format=csv", "-o", "v.csv", D)
rows = list(csv.DictReader(open("v.csv", newline="")))
compare("csv", {r["function"]: float(r["cpu_self_pct"]) for r in rows})

# ---- folded --------------------------------------------------------------------------
run(CAPPROF, "export", "--format=folded", "-o", "v.folded", D)
fold = defaultdict(float)
for ln in open("v.folded"):
    path, v = ln.rstrip("\n").rsplit(" ", 1)
    fold[path.split(";")[-1]] += float(v)
ft = sum(fold.values())
compare("folded", {n: 100.0 * v / ft for n, v in fold.items()})

# ---- callgrind: the file, and callgrind_annotate's reading of it ---------------------
run(CAPPROF, "export", "--format=callgrind", "-o", "v.callgrind", D)
cg = open("v.callgrind").read().splitlines()
events = next(ln for ln in cg if ln.startswith("events:")).split()[1:]
if events[0] != "CPU_ns":
    fail("callgrind: the first event is %s, not CPU_ns (report ranks by cpu)" % events[0])
names, cur, cgself, in_call = {}, None, defaultdict(float), False
for ln in cg:
    m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", ln)
    if m:
        if m.group(3):
            names[m.group(2)] = m.group(3)
        if m.group(1) == "fn":
            cur = names[m.group(2)]
        continue
    if ln.startswith("calls="):
        if int(ln.split("=")[1].split()[0]) == 0:
            fail("callgrind: a calls=0 line (its cost would count as the caller's self)")
        in_call = True
        continue
    if cur and re.match(r"^\d+ ", ln):
        if not in_call:
            cgself[cur] += float(ln.split()[1])
        in_call = False
cgtot = float(next(ln for ln in cg if ln.startswith("totals:")).split()[1])
compare("callgrind", {n: 100.0 * v / cgtot for n, v in cgself.items()})
if abs(cgtot - tot) > 0.5:
    fail("callgrind's total %.0f is not JSON's %.0f" % (cgtot, tot))
if shutil.which("callgrind_annotate"):
    ann = run("callgrind_annotate", "--threshold=100", "v.callgrind")
    cga, total_seen = {}, None
    for ln in ann.splitlines():
        m = re.match(r"^\s*([\d,]+) \(\s*([\d.]+)%\)\s.*?  (\S.*)$", ln)
        if not m:
            continue
        rest = m.group(3)
        if rest.startswith("PROGRAM TOTALS"):
            total_seen = float(m.group(1).replace(",", ""))
            continue
        rest = re.sub(r" \[[^\]]*\]$", "", rest)
        mm = re.match(r"^([^:]*):(?!:)(.*)$", rest)       # file:function
        if mm:
            cga[mm.group(2)] = cga.get(mm.group(2), 0) + float(m.group(2))
    if total_seen is None or abs(total_seen - tot) > 0.5:
        fail("callgrind_annotate's PROGRAM TOTALS %s is not report's total %.0f" % (total_seen, tot))
    compare("callgrind_annotate", cga, tol=0.06)
else:
    print("callgrind_annotate not installed (Debian valgrind): its reading not checked")

# ---- speedscope: each thread's first profile -----------------------------------------
run(CAPPROF, "export", "--format=speedscope", "-o", "v.speedscope", D)
ss = json.load(open("v.speedscope"))
frames = ss["shared"]["frames"]
sself = defaultdict(float)
for prof in ss["profiles"]:
    if "cpu:" not in prof["name"]:
        continue
    stack = []                       # [frame, start, children's time]
    for ev in prof["events"]:
        if ev["type"] == "O":
            stack.append([ev["frame"], ev["at"], 0.0])
        else:
            f, at, kids = stack.pop()
            dur = ev["at"] - at
            sself[frames[f]["name"]] += dur - kids
            if stack:
                stack[-1][2] += dur
if not sself:
    fail("speedscope: no profile laid out by cpu")
st = sum(sself.values())
compare("speedscope", {n: 100.0 * v / st for n, v in sself.items()})

# ---- the HTML page's data: flat table and icicle -------------------------------------
run(CAPPROF, "export", "--format=html", "-o", "v.html", D)
page = open("v.html").read()
data, _ = json.JSONDecoder().raw_decode(page[page.index('{"kind":"profile"'):])
if data.get("weight") != "cpu":
    fail("html: the page does not rank by cpu (%s)" % data.get("weight"))
fl = data["flat"]
keys = [c["key"] for c in fl["cols"]]
if keys[0] != "cpupct" or fl.get("sort") != "cpupct":
    fail("html: the table does not start and sort with cpu self%% (%s, %s)" % (keys, fl.get("sort")))
fnames = data["funcs"]["name"]
col = fl["v"][keys.index("cpupct")]
compare("html table", {fnames[r]: col[k] for k, r in enumerate(fl["rows"])})
tree = data["trees"][0]
ws, nk, fs = tree["w"], tree["n"], tree["f"]
hself = defaultdict(float)
stack = []                            # [entry, children left]
excl = list(ws)
for i in range(len(fs)):
    if stack:
        p = stack[-1]
        excl[p[0]] -= ws[i]
        p[1] -= 1
    stack.append([i, nk[i]])
    while stack and stack[-1][1] <= 0:
        stack.pop()
for i in range(1, len(fs)):
    hself[fnames[fs[i]]] += max(excl[i], 0)
compare("html icicle", {n: 100.0 * v / ws[0] for n, v in hself.items()})

# ---- tree and callers: inclusive shares ----------------------------------------------
bigi = {n: rep_incl[n] for n in big}
tincl, tcount = defaultdict(float), defaultdict(int)
out = run(CAPPROF, "tree", "--width=0", "--full-names", D).splitlines()
head = next(i for i, ln in enumerate(out) if ln.rstrip().endswith("cpu incl%  function"))
for ln in out[head + 1:]:
    m = re.match(r"^.*?\s([\d.]+)%  ( *)(\S.*)$", ln)
    if not m:
        continue
    name = strip(m.group(3).replace(" [unhooked]", "").replace(" [still running]", ""))
    name = re.sub(r" \[throttled: [^\]]*\]$", "", name)
    tincl[name] += float(m.group(1))   # views.cpp does not recurse: every node is outermost
    tcount[name] += 1
bad = ["%s: %.1f, report %.1f" % (n, tincl[n], v) for n, v in bigi.items()
       if abs(tincl[n] - v) > 0.051 * (tcount[n] + 1)]
if any(float(v) > 100 for v in re.findall(r"([\d.]+)%", "\n".join(out[head + 1:]))):
    bad.append("a share above 100 %")
if bad:
    fail("tree's cpu incl%% disagrees with report's: %s" % "; ".join(bad))
else:
    print("ok: tree (%d functions)" % len(bigi))
bad = []
for n, v in bigi.items():
    lines = run(CAPPROF, "callers", "--width=0", "--full-names", n, D).splitlines()
    own = next((ln for ln in lines[1:]             # FUNC's line: not indented
                if not re.split(r"%  ", ln, 1)[-1].startswith(" ")), None)
    m = re.match(r"^\s*[\d,]+\s+([\d.]+) (ns|us|ms|s) ", own or "")
    if not m:
        bad.append("%s: no line of its own in %s" % (n, lines))
        continue
    ns = float(m.group(1)) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)]
    got = 100.0 * ns / tot            # three significant digits: 0.5 % of the value
    if abs(got - v) > 0.051 + v * 0.005:
        bad.append("%s: %.2f, report %.1f" % (n, got, v))
if bad:
    fail("callers' cpu incl disagrees with report's cpu incl%%: %s" % "; ".join(bad))
else:
    print("ok: callers (%d functions)" % len(bigi))

# ---- report for a terminal ----------------------------------------------------------
rep = run(CAPPROF, "report", D)                  # not a terminal: 80 columns
lines = rep.splitlines()
wide = [ln for ln in lines if len(ln) > 80]
if wide:
    fail("report is wider than 80 columns: %s" % wide[:3])
hdr = next(i for i, ln in enumerate(lines) if ln.endswith("  function"))
if hdr > 2:
    fail("report's header is %d lines, not at most 2: %s" % (hdr, lines[:hdr]))
if not lines[1].startswith("ranked by cpu"):
    fail("report does not say what ranks: %r" % lines[1])
at = lines[hdr].index("function")
if at > 40:
    fail("report leaves names %d of 80 columns" % (80 - at))
for ln in lines[hdr + 1:]:
    if not ln.strip():
        break
    if len(ln) < at + 40 and ln.endswith("..."):
        fail("a name cut to fewer than 40 columns: %r" % ln)
q = run(CAPPROF, "report", "-q", D).splitlines()
if not q[0].endswith("  function"):
    fail("report -q prints a header: %r" % q[0])

if fails:
    print("views: %d failures" % len(fails))
    sys.exit(1)
print("views: all passed")
