#!/usr/bin/env python3
"""compare.py -- the figures of bench/fidelity.sh for one program and compiler
mode: per-function exclusive-time shares of a capprof profile (compensated and
raw, from 'capprof export --format=json') against perf samples of the
uninstrumented build ('perf script -F ip,sym,dso' with call chains), as a
total-variation distance, beside two perf runs against each other (the noise
floor), and the top functions of each side.

  compare.py --json CAP.json --perf A.txt [--perf B.txt] --module NAME [--label L]
             [--samples] [--near N.txt]
  compare.py --json CAP.json --perf A.txt --hooked H.txt --runtime-syms S.txt
             --module NAME [--label L]
  ... [--views DIR]

With --views: DIR holds the same run as each view shows it (report.txt:
'capprof report -q -F cpu-self --width=0'; folded.txt, callgrind.out; pprof.txt,
'go tool pprof -top -sample_index=cpu', if present); each view's per-function
self figure, with the JSON export's weight_self, is compared with perf as
above (TVD, top five), and the top five of every view are printed beside
perf's. Only the module's functions count; the share of a view's total
outside them is printed.

With --samples (a run with CAPPROF_SAMPLE): the capprof side is each
function's CPU time from the samples charged to its call paths whose program
counter was in the program's own code ("cpu_self_ns"; those in capprof's hooks
are left out), beside the compensated and raw times of the same run.

With --near: N.txt is perf on the plain build recorded right before this
capprof run, and the reference instead of A.txt: on a shared machine the
plain program's own profile drifts over minutes (its memory-bound functions
slow down when the host is busy), by more than perf's noise between two runs
in a row. A.txt and B.txt still give the noise floor, and the line adds the
drift, N.txt against A.txt.

With --hooked: H.txt is perf sampling the *hooked* build (the same script
output); its samples whose innermost frame is one of capprof's own functions
(S.txt, one name a line: every symbol libcapprof defines) are left out, the
others charged as above. That profile is what the hooked program itself does
apart from its hooks: its distance from perf on the plain build is how far
the hooks change the program, which no attribution inside it can undo.

A perf sample is charged to the innermost frame of its call chain whose
function capprof recorded (kernel frames, libraries and functions without
hooks count for their nearest instrumented caller, as capprof counts them);
samples with no such frame (start-up before main, exit) are left out.
"""
import argparse
import json
import sys


def perf_samples(path):
    """Yield the call chain of each sample: [(sym, dso), ...] innermost first."""
    chain = []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line:
                if chain:
                    yield chain
                chain = []
                continue
            parts = line.split(None, 1)
            if len(parts) < 2:
                continue
            rest = parts[1]
            dso = ""
            if rest.endswith(")") and " (" in rest:
                rest, dso = rest.rsplit(" (", 1)
                dso = dso[:-1]
            chain.append((rest, dso))
    if chain:
        yield chain


def perf_profile(path, known, runtime=frozenset()):
    """Samples per instrumented function, and the count of samples used/left
    out; with runtime, also those whose innermost frame is one of its names."""
    counts, used, left, inrt = {}, 0, 0, 0
    for chain in perf_samples(path):
        # the innermost frame of the program's own code: a sample in the
        # kernel (a system call, a page fault, a signal's delivery) counts
        # for the code that entered it
        user = next((f for f in chain if not f[1].startswith("[kernel")), chain[0])
        if runtime and user[0].split("+")[0] in runtime:
            inrt += 1
            continue
        name = None
        for sym, dso in chain:
            if sym in known:
                name = sym
                break
        if name is None:
            left += 1
            continue
        used += 1
        counts[name] = counts.get(name, 0) + 1
    if runtime:
        return counts, used, left, inrt
    return counts, used, left


def cap_profile(doc, module, field):
    """Exclusive time per function of module from the JSON flat profile
    (field self_ns or self_ns_raw; JSON version 1 called them excl_ns...)."""
    out = {}
    for fn in doc["functions"]:
        if fn.get("module") != module:
            continue
        v = fn[field] if field in fn else fn[field.replace("self_", "excl_")]
        out[fn["name"]] = out.get(fn["name"], 0) + v
    return out


def subsample(counts, n, seed=1):
    """n of the samples in counts, drawn at random without replacement: perf
    against itself at capprof's sample count (the noise floor there)."""
    import random
    pool = [k for k, v in counts.items() for _ in range(int(v))]
    out = {}
    for k in random.Random(seed).sample(pool, n):
        out[k] = out.get(k, 0) + 1
    return out


def shares(d):
    total = float(sum(d.values()))
    return {k: v / total for k, v in d.items()} if total > 0 else {}


def tvd(a, b):
    pa, pb = shares(a), shares(b)
    return 0.5 * sum(abs(pa.get(k, 0.0) - pb.get(k, 0.0)) for k in set(pa) | set(pb))


def top(d, n=10):
    s = shares(d)
    return sorted(s.items(), key=lambda kv: -kv[1])[:n]


def top_agreement(cap, ref, n=5):
    """How many of perf's top n functions are capprof's top n, and whether in
    the same order (the issue's "top functions are the ones perf names")."""
    tc = [k for k, _ in top(cap, n)]
    tp = [k for k, _ in top(ref, n)]
    common = len(set(tc) & set(tp))
    if tc == tp:
        return f"top {n}: perf's, in its order"
    if common == len(tp):
        return f"top {n}: perf's, in another order"
    missing = ", ".join(k for k in tp if k not in tc)
    return f"top {n}: {common} of perf's (not: {missing})"


UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "ms": 1e-3, "s": 1.0,
         "min": 60.0, "h": 3600.0}


def duration(text):
    """A figure as report or pprof prints it (12.3ms, 1.5s, 42), in seconds
    (or as is when it has no unit)."""
    text = text.replace(",", "")
    for u in sorted(UNITS, key=len, reverse=True):
        if text.endswith(u) and text[:-len(u)].replace(".", "", 1).isdigit():
            return float(text[:-len(u)]) * UNITS[u]
    return float(text)


def view_report(path):
    """report -q -F cpu-self: '6.13 s  name  (file:line)  [note]' lines."""
    import re
    line_re = re.compile(r"^\s*([\d.,]+)\s?([a-z\u00b5]*)\s{2}(\S.*?)(\s{2}|$)")
    out = {}
    for line in open(path, errors="replace"):
        m = line_re.match(line.rstrip("\n"))
        if m:
            v = duration(m.group(1) + m.group(2))
            out[m.group(3)] = out.get(m.group(3), 0) + v
    return out


def view_folded(path):
    """The folded export: each path's self figure, charged to its leaf."""
    out = {}
    for line in open(path, errors="replace"):
        stack, _, v = line.rstrip("\n").rpartition(" ")
        if stack:
            leaf = stack.rsplit(";", 1)[-1]
            out[leaf] = out.get(leaf, 0) + float(v)
    return out


def view_callgrind(path):
    """The callgrind export's first event, the cost lines of each fn= (the
    inclusive cost after a calls= line is the callee's, not fn's self)."""
    out, names, fn, after_calls = {}, {}, None, False
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith(("fn=", "cfn=")):
            ref = line.partition("=")[2]  # "(id) name" defines id, "(id)" uses it
            if ref.startswith("("):
                key, _, name = ref[1:].partition(")")
                name = name.strip() or names.get(key, key)
                names[key] = name
            else:
                name = ref
            if line.startswith("fn="):
                fn, after_calls = name, False
        elif line.startswith("calls="):
            after_calls = True
        elif line[:1].isdigit() or line[:1] in "+-*":
            if after_calls:
                after_calls = False
            elif fn is not None:
                f = line.split()
                if len(f) > 1:
                    out[fn] = out.get(fn, 0) + float(f[1])
    return out


def view_pprof(path):
    """go tool pprof -top: flat, flat%, sum%, cum, cum%, name."""
    out, table = {}, False
    for line in open(path, errors="replace"):
        f = line.split()
        if len(f) >= 5 and f[1] == "flat%":
            table = True
        elif table and len(f) >= 6:
            name = " ".join(f[5:])
            out[name] = out.get(name, 0) + duration(f[0])
    return out


def view_weight(doc, module):
    return cap_profile(doc, module, "weight_self")


def views(a, doc, known, ref):
    """--views: each view's TVD from perf and the top five side by side."""
    import os
    got = [("json weight_self", view_weight(doc, a.module))]
    for name, file, parse in (("report cpu self", "report.txt", view_report),
                              ("folded", "folded.txt", view_folded),
                              ("callgrind ev1", "callgrind.out", view_callgrind),
                              ("pprof -top cpu", "pprof.txt", view_pprof)):
        path = os.path.join(a.views, file)
        if os.path.exists(path) and os.path.getsize(path):
            got.insert(len(got) - 1, (name, parse(path)))
    cols = [("perf plain", ref)]
    for name, d in got:
        mine = {k: v for k, v in d.items() if k in known}
        total = sum(d.values())
        out = 1 - sum(mine.values()) / total if total else 0
        print(f"{a.label}: view {name:17} TVD {tvd(mine, ref):.3f}  {top_agreement(mine, ref)}"
              f"  ({100 * out:.1f}% of its total outside the module's functions)")
        cols.append((name, mine))
    w = 31
    print(f"{a.label}: top 5 of each view, beside perf's (shares of the module's functions)")
    print("  " + " | ".join(f"{n:{w}}" for n, _ in cols).rstrip())
    tops = [top(d, 5) for _, d in cols]
    for i in range(5):
        row = []
        for t in tops:
            k, v = t[i] if i < len(t) else ("", None)
            row.append(f"{v*100:5.1f}% {k[:w - 7]:{w - 7}}" if v is not None else " " * w)
        print("  " + " | ".join(row).rstrip())


def two_columns(left, right, width):
    """Print two lists of text side by side, 'left | right'."""
    for i in range(max(len(left), len(right))):
        a = left[i] if i < len(left) else ""
        b = right[i] if i < len(right) else ""
        print(f"  {a:{width}} | {b}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", required=True)
    ap.add_argument("--perf", action="append", required=True)
    ap.add_argument("--module", required=True)
    ap.add_argument("--label", default="")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--samples", action="store_true")
    ap.add_argument("--samples-if-any", action="store_true",
                    help="--samples when the run was sampled (the default mode), "
                         "else the hooks' compensated times")
    ap.add_argument("--hooked")
    ap.add_argument("--runtime-syms")
    ap.add_argument("--near")
    ap.add_argument("--views")
    a = ap.parse_args()

    doc = json.load(open(a.json))
    if a.samples_if_any:
        a.samples = any(fn.get("self_samples", 0) for fn in doc["functions"])
    comp = cap_profile(doc, a.module, "self_ns")
    raw = cap_profile(doc, a.module, "self_ns_raw")
    known = set(comp)
    hooks = comp
    if a.samples:
        sampled = cap_profile(doc, a.module, "cpu_self_ns")
        probe = sum(fn.get("probe_samples", 0) for fn in doc["functions"])
        own = sum(fn.get("self_samples", 0) for fn in doc["functions"])
        comp = sampled
    perfs = []
    for p in a.perf:
        c, used, left = perf_profile(p, known)
        perfs.append(c)
        print(f"{a.label}: perf {p}: {used} samples charged, {left} outside instrumented code")
    ref = perfs[0]
    drift = None
    if a.near:
        near, used, left = perf_profile(a.near, known)
        print(f"{a.label}: perf {a.near} (right before this run): {used} samples charged, "
              f"{left} outside instrumented code")
        drift = tvd(near, perfs[0])
        ref = near
    if a.hooked:
        rt = frozenset(l.strip() for l in open(a.runtime_syms) if l.strip())
        hp, used, left, inrt = perf_profile(a.hooked, known, rt)
        tot = used + left + inrt
        print(f"{a.label}: TVD hooked-program-vs-perf {tvd(hp, ref):.3f} (perf on the hooked "
              f"build: {used} samples charged, {inrt} in capprof's code left out "
              f"({100.0 * inrt / max(tot, 1):.0f}%), {left} outside instrumented code)"
              + (f"  drift {drift:.3f}" if drift is not None else ""))
        th, tp = top(hp, a.top), top(ref, a.top)
        sh = shares(hp)
        print(f"{a.label}: top {a.top}: perf plain (perf hooked) | perf hooked")
        two_columns([f"{v*100:5.1f}% ({sh.get(k,0)*100:5.1f}%) {k[:28]:28}" for k, v in tp],
                    [f"{v*100:5.1f}% {k[:28]}" for k, v in th], 52)
        return 0
    if a.samples:
        line = (f"{a.label}: TVD capprof-vs-perf {tvd(comp, ref):.3f} (sampled cpu self; "
                f"{own:.0f} samples in the program, {probe:.0f} in capprof's hooks left out; "
                f"the same run's compensated {tvd(hooks, ref):.3f}, raw {tvd(raw, ref):.3f})")
    else:
        line = f"{a.label}: TVD capprof-vs-perf {tvd(comp, ref):.3f} (raw {tvd(raw, ref):.3f})"
    if len(perfs) > 1:
        line += f"  perf-vs-perf {tvd(perfs[1], perfs[0]):.3f}"
        if a.samples and own < sum(perfs[1].values()):
            line += (f" ({tvd(subsample(perfs[1], int(own)), perfs[0]):.3f} at {own:.0f} "
                     f"of its samples)")
    if drift is not None:
        line += f"  drift {drift:.3f}"
    line += "  " + top_agreement(comp, ref)
    print(line)
    tc, tr, tp = top(comp, a.top), top(raw, a.top), top(ref, a.top)
    sc, sr, sp = shares(comp), shares(raw), shares(ref)
    what = "sampled" if a.samples else "compensated"
    print(f"{a.label}: top {a.top} by exclusive share: perf (capprof {what}, raw)"
          f" | capprof {what} (perf)")
    two_columns([f"{v*100:5.1f}% ({sc.get(k,0)*100:5.1f}% {sr.get(k,0)*100:5.1f}%) {k[:28]:28}"
                 for k, v in tp],
                [f"{v*100:5.1f}% ({sp.get(k,0)*100:5.1f}%) {k[:28]}" for k, v in tc], 58)
    if a.views:
        views(a, doc, known, ref)


if __name__ == "__main__":
    sys.exit(main())
