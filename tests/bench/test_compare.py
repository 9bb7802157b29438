#!/usr/bin/env python3
"""test_compare.py DIR -- the fidelity bench's figures (bench/fidelity/
compare.py in DIR) on small hand-made profiles: perf samples charged to
their innermost instrumented frame (a library or kernel frame counts for its
caller, a sample in capprof's code is left out), the total-variation
distance, and whether capprof's top five are perf's."""
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, sys.argv[1])
import compare  # noqa: E402

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print(f"FAIL: {what}")


# perf script -F ip,sym,dso output: one frame a line, innermost first,
# a blank line between samples.
SCRIPT = """\
\t    1000 inner (/bin/prog)
\t    2000 outer (/bin/prog)

\t    3000 memcpy (/lib/libc.so.6)
\t    1000 inner (/bin/prog)
\t    2000 outer (/bin/prog)

\tffff8000 clear_page ([kernel.kallsyms])
\t    2000 outer (/bin/prog)

\t    4000 __fentry__ (/bin/prog)
\t    2000 outer (/bin/prog)

\t    5000 _start (/bin/prog)
"""
with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    f.write(SCRIPT)
    path = f.name
try:
    known = {"inner", "outer", "__fentry__"}
    counts, used, left = compare.perf_profile(path, {"inner", "outer"})
    check(counts == {"inner": 2, "outer": 2}, f"charged to the innermost known frame: {counts}")
    check((used, left) == (4, 1), f"used/left without runtime (_start is left): {used}/{left}")
    counts, used, left, inrt = compare.perf_profile(path, known, frozenset({"__fentry__"}))
    check(counts == {"inner": 2, "outer": 1}, f"hook samples left out: {counts}")
    check(inrt == 1 and left == 1, f"in runtime {inrt}, outside instrumented code {left}")
finally:
    os.unlink(path)

check(compare.tvd({"a": 1, "b": 1}, {"a": 2, "b": 2}) == 0.0, "same shares: distance 0")
check(compare.tvd({"a": 1}, {"b": 5}) == 1.0, "disjoint: distance 1")
check(abs(compare.tvd({"a": 3, "b": 1}, {"a": 1, "b": 1}) - 0.25) < 1e-12, "3:1 against 1:1: 0.25")

ref = {"f1": 50, "f2": 40, "f3": 30, "f4": 20, "f5": 10, "f6": 5}
check(compare.top_agreement(dict(ref), ref) == "top 5: perf's, in its order", "same top five")
swapped = dict(ref, f1=35)
check(compare.top_agreement(swapped, ref) == "top 5: perf's, in another order", "order differs")
other = dict(ref, f6=60)
check(compare.top_agreement(other, ref) == "top 5: 4 of perf's (not: f5)", "one missing")

# --near: the reference is a perf run made right before the capprof run;
# the first perf run stays the noise floor's, and the line says how far the
# near one drifted from it.
import contextlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402


def samples(counts):
    return "".join(f"\t    1000 {name} (/bin/prog)\n\n" * n for name, n in counts.items())


tmp = tempfile.mkdtemp()
files = {}
for name, text in {"cap.json": json.dumps({"functions": [
                       {"name": "inner", "module": "prog", "self_ns": 100, "self_ns_raw": 300},
                       {"name": "outer", "module": "prog", "self_ns": 100, "self_ns_raw": 100}]}),
                   "perf1.txt": samples({"inner": 3, "outer": 1}),
                   "perf2.txt": samples({"inner": 3, "outer": 1}),
                   "near.txt": samples({"inner": 1, "outer": 1})}.items():
    files[name] = os.path.join(tmp, name)
    with open(files[name], "w") as f:
        f.write(text)


def run(*extra):
    argv = ["compare.py", "--json", files["cap.json"], "--perf", files["perf1.txt"],
            "--perf", files["perf2.txt"], "--module", "prog", "--label", "t", *extra]
    out = io.StringIO()
    saved, sys.argv = sys.argv, argv
    try:
        with contextlib.redirect_stdout(out):
            compare.main()
    finally:
        sys.argv = saved
    return next(line for line in out.getvalue().splitlines() if "TVD" in line)


try:
    line = run()
    check("TVD capprof-vs-perf 0.250" in line and "drift" not in line,
          f"against the first perf run: {line}")
    check("perf-vs-perf 0.000" in line, f"noise floor from the two perf runs: {line}")
    line = run("--near", files["near.txt"])
    check("TVD capprof-vs-perf 0.000" in line, f"against the near run: {line}")
    check("perf-vs-perf 0.000" in line and "drift 0.250" in line,
          f"noise floor unchanged, drift printed: {line}")
finally:
    for path in files.values():
        os.unlink(path)
    os.rmdir(tmp)

# --views: each view's text read back to a self figure per function.
VIEWS = {
    "report.txt": " cpu self  function\n"
                  "   6.13 s  inner  (a.c:7)  [unhooked]\n"
                  "  250 ms  outer  (a.c:1)\n"
                  "[unhooked]: 1 function very frequent\n"
                  "34 functions in a note line\n",
    "folded.txt": "main;outer 250\nmain;outer;inner 6000\nmain;other;inner 130\n",
    # cfn= defines a compressed name that a later fn= uses; the cost line
    # after calls= is the callee's inclusive figure, not the caller's self
    "callgrind.out": "events: CPU_ns Samples ns\n\nfn=(1) outer\n1 250 1 9\n"
                     "cfn=(2) inner\ncalls=3 7\n1 6130 24 5\n\nfn=(2)\n7 6130 24 5\n",
    "pprof.txt": "Type: cpu\n      flat  flat%   sum%        cum   cum%\n"
                 "    6.13s 96.08% 96.08%      6.13s 96.08%  inner\n"
                 "   250ms  3.92%   100%      6.38s   100%  outer\n",
}
tmp = tempfile.mkdtemp()
try:
    for name, text in VIEWS.items():
        with open(os.path.join(tmp, name), "w") as f:
            f.write(text)
    got = compare.view_report(os.path.join(tmp, "report.txt"))
    check(got == {"inner": 6.13, "outer": 0.25}, f"report: {got}")
    got = compare.view_folded(os.path.join(tmp, "folded.txt"))
    check(got == {"outer": 250, "inner": 6130}, f"folded, by leaf: {got}")
    got = compare.view_callgrind(os.path.join(tmp, "callgrind.out"))
    check(got == {"outer": 250, "inner": 6130}, f"callgrind's first event: {got}")
    got = compare.view_pprof(os.path.join(tmp, "pprof.txt"))
    check(abs(got["inner"] - 6.13) < 1e-9 and abs(got["outer"] - 0.25) < 1e-9
          and len(got) == 2, f"pprof -top flat: {got}")
finally:
    for name in VIEWS:
        os.unlink(os.path.join(tmp, name))
    os.rmdir(tmp)

sys.exit(1 if failures else 0)
