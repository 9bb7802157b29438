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


if __name__ == "__main__":
    sys.exit(main())
