#!/usr/bin/env python3
"""check_page.py PAGE [NAME=CALLS...] [--pruned] -- checks the data inside an
HTML page written by 'capprof export --format=html' or 'capprof diff
--format=html', without a browser (tests/tool/e2e.sh): the page loads
nothing from elsewhere; the JSON parses; every tree's preorder child counts
describe exactly its entries; function ids resolve; a node's inclusive time
covers its children's (up to rounding); with NAME=CALLS, the flat table's
'calls' column holds CALLS for NAME; with --pruned, some tree was pruned into
"[other]" nodes and stays within the page's node limit.
"""
import json
import re
import sys

page, args = sys.argv[1], sys.argv[2:]
text = open(page, encoding="utf-8").read()
problems = []

for pat in (r"<script[^>]*\bsrc=", r"<link\b", r"\burl\(", r"@import", r"https?://"):
    if re.search(pat, text):
        problems.append("the page refers to something outside it (%s)" % pat)
m = re.search(r'<script type="application/json" id="capprof-data">(.*?)</script>', text, re.S)
if not m:
    sys.exit("check_page: no data element in %s" % page)
d = json.loads(m.group(1))
nf = len(d["funcs"]["name"])
for k in ("module", "file", "line", "kind"):
    if len(d["funcs"][k]) != nf:
        problems.append("funcs.%s has %d entries, name has %d" % (k, len(d["funcs"][k]), nf))

pruned = 0
for t in d["trees"]:
    n, f, c, tt = t["n"], t["f"], t["c"], t["t"]
    cols = [t[k] for k in ("mn", "mx") if k in t] + [t[k] for k in ("bc", "bt") if k in t]
    if any(len(x) != len(n) for x in [f, c, tt] + cols) or len(cols) != 2:
        problems.append("%s: columns of different lengths" % t["label"])
        continue
    if sum(n) != len(n) - 1:
        problems.append("%s: child counts add up to %d for %d entries" % (t["label"], sum(n), len(n)))
    if any(x < 0 or x >= nf for x in f):
        problems.append("%s: a function id out of range" % t["label"])
    # rebuild the tree from the preorder counts: inclusive covers the children
    stack, kids = [], [0.0] * len(n)
    for i in range(len(n)):
        if stack:
            p = stack[-1]
            kids[p[0]] += tt[i]
            p[1] -= 1
        stack.append([i, n[i]])
        while stack and stack[-1][1] == 0:
            stack.pop()
    for i in range(len(n)):
        if tt[i] + n[i] + 1 < kids[i]:
            problems.append("%s: entry %d has incl %d below its children's %d"
                            % (t["label"], i, tt[i], kids[i]))
            break
    pruned += len(t["other"]) // 2
    if len(n) > t["nodes"] + 1 + len(t["other"]) // 2:
        problems.append("%s: more entries than paths" % t["label"])

flat = d["flat"]
keys = [c["key"] for c in flat["cols"]]
for a in args:
    if a == "--pruned":
        written = sum(len(t["n"]) - 1 - len(t["other"]) // 2 for t in d["trees"])
        if not pruned:
            problems.append("no tree was pruned")
        if d["max_nodes"] and written > d["max_nodes"] + 100 * len(d["trees"]):
            problems.append("%d nodes written, limit %d" % (written, d["max_nodes"]))
        continue
    name, want = a.split("=")
    rows = [k for k, fid in enumerate(flat["rows"]) if d["funcs"]["name"][fid] == name]
    if not rows:
        problems.append("no row for %s" % name)
        continue
    col = keys.index("calls") if "calls" in keys else keys.index("calls_a")
    got = flat["v"][col][rows[0]]
    got = got[0] if isinstance(got, list) else got
    if abs(float(got) - float(want)) > 1e-6:
        problems.append("%s: calls %s, wanted %s" % (name, got, want))

for p in problems:
    print("check_page: %s: %s" % (page, p))
sys.exit(1 if problems else 0)
