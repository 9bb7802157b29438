#!/usr/bin/env python3
"""check.py CAPPROF CHECK DUMP... -- checks on sampled dumps, read through
'capprof export --format=json' (fields in docs/tool.md). Exits 1 with a
reason when a check fails."""
import json
import subprocess
import sys


def load(capprof, dump):
    out = subprocess.run([capprof, "export", "--format=json", dump], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def func(doc, name):
    for f in doc["functions"]:
        if f["name"] == name:
            return f
    sys.exit("no function %s in %s" % (name, [f["name"] for f in doc["functions"]]))


def membarrier_sync_core():
    """Whether this kernel lets a process serialize its threads' cores
    after changing code (membarrier PRIVATE_EXPEDITED_SYNC_CORE, Linux 4.16;
    the runtime's unhook.c uses it): query, then register."""
    import ctypes, platform
    if platform.machine() != "x86_64":
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    nr = 324                                  # __NR_membarrier on x86-64
    query, sync_core, register = 0, 1 << 5, 1 << 6
    cmds = libc.syscall(nr, query, 0, 0)
    return cmds >= 0 and bool(cmds & sync_core) and libc.syscall(nr, register, 0, 0) == 0


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    capprof, check, dumps = sys.argv[1], sys.argv[2], sys.argv[3:]
    doc = load(capprof, dumps[0])
    sampling = doc["dumps"][0].get("sampling")
    if not sampling:
        fail("the dump has no sampling session")
    print("sampling:", sampling)
    if check in ("ratio", "ratio_timer"):
        h, l = func(doc, "heavy")["pc_self_samples"], func(doc, "light")["pc_self_samples"]
        print("heavy %d light %d ratio %.3f" % (h, l, h / max(l, 1)))
        if h + l < 2000:
            fail("only %d samples in heavy and light (want >= 2000)" % (h + l))
        # The timer fires at the scheduler tick (4 ms at HZ=250), each signal
        # weighted by the intervals it covers: ~1/40 as many independent
        # samples as perf's, so only the direction of the ratio is sure.
        lo, hi = (2.5, 3.7) if check == "ratio" else (1.5, 6.0)
        if not lo <= h / max(l, 1) <= hi:
            fail("ratio %.3f is not within [%.1f, %.1f]" % (h / max(l, 1), lo, hi))
        want = "CPU-time timer" if check == "ratio_timer" else "perf_event_open"
        if want not in sampling["method"]:
            fail("method %r does not mention %r" % (sampling["method"], want))
        if check == "ratio_timer" and "fell back" not in sampling["note"]:
            fail("the note does not say it fell back: %r" % sampling["note"])
        # The sampled call tree: main calls heavy and light (frame pointers).
        tree = next((t for t in doc["threads"] if t.get("sampled")), None)
        if not tree:
            fail("no sampled call tree in the dump")
        names = {n["id"]: n["name"] for n in tree["nodes"]}
        edges = {(names.get(n["parent"]), n["name"]) for n in tree["nodes"]}
        if ("main", "heavy") not in edges or ("main", "light") not in edges:
            fail("sampled tree lacks main->heavy and main->light: %s" % sorted(map(str, edges)))
    elif check == "waiter_worker":
        worker, waiter = func(doc, "worker"), func(doc, "waiter")
        print("worker cpu %.1f ms incl %.1f ms; waiter cpu %.1f ms incl %.1f ms" % (
            worker["cpu_ns"] / 1e6, worker["incl_ns"] / 1e6, waiter["cpu_ns"] / 1e6,
            waiter["incl_ns"] / 1e6))
        if abs(worker["cpu_ns"] - 200e6) > 0.2 * 200e6:
            fail("worker's CPU time %.1f ms is not within 20%% of 200 ms" % (worker["cpu_ns"] / 1e6))
        if waiter["cpu_ns"] >= 0.05 * worker["cpu_ns"]:
            fail("waiter's CPU time is not under 5% of the worker's")
        if waiter["incl_ns"] < 190e6:
            fail("waiter's elapsed time %.1f ms is under 200 ms" % (waiter["incl_ns"] / 1e6))
    elif check == "threads8":
        spin = [t for t in doc["threads"] if any(n["name"] == "spinner" for n in t["nodes"])]
        counts = sorted(sum(n["self_samples"] for n in t["nodes"] if n["name"] == "spinner")
                        for t in spin)
        print("spinner samples per thread:", counts)
        if len(spin) != 8 or counts[0] < 20:
            fail("want 8 sampled threads with >= 20 samples each")
    elif check == "fork":
        if len(dumps) != 2:
            fail("want the parent's and the child's dumps, got %d" % len(dumps))
        docs = [load(capprof, d) for d in dumps]
        kinds = []
        for d in docs:
            names = {f["name"]: f["pc_self_samples"] for f in d["functions"]}
            p, c = names.get("parent_work", 0), names.get("child_work", 0)
            print(d["dumps"][0]["path"], "parent_work", p, "child_work", c)
            if p and c:
                fail("a dump holds samples of both processes")
            kinds.append("parent" if p > 20 else "child" if c > 20 else "none")
        if sorted(kinds) != ["child", "parent"]:
            fail("want one dump with parent_work's samples and one with child_work's: %s" % kinds)
    elif check == "probe":
        w, wo, t = func(doc, "with_calls"), func(doc, "without_calls"), func(doc, "tiny")
        probe = sum(f.get("probe_samples", 0) for f in doc["functions"])
        own = sum(f.get("self_samples", 0) for f in doc["functions"])
        ratio = w["self_samples"] / max(wo["self_samples"], 1)
        whole = (w["self_samples"] + w["probe_samples"] + t["self_samples"] + t["probe_samples"]) \
            / max(wo["self_samples"] + wo["probe_samples"], 1)
        print("samples: program %d, hooks %d; with_calls %d (+%d in hooks), tiny %d (+%d), "
              "without_calls %d (+%d)" % (own, probe, w["self_samples"], w["probe_samples"],
                                         t["self_samples"], t["probe_samples"],
                                         wo["self_samples"], wo["probe_samples"]))
        print("with_calls / without_calls, cpu self: %.2f; with the hooks' samples: %.2f"
              % (ratio, whole))
        if own + probe < 2000:
            fail("only %d samples (want >= 2000)" % (own + probe))
        # 20-35% alone; 20% with libcapprof.so beside a build (CI, this VM).
        if probe < 0.1 * (own + probe):
            fail("under 10%% of the samples in capprof's hooks: %d of %d" % (probe, own + probe))
        # How much the hooks add depends on the processor and its load: on
        # an AMD EPYC VM 1.5-1.7 alone, 1.15-1.2 beside the rest of the
        # suite, and GCC's assembly hooks (fentry: an untimed call ~3 ns
        # against ~10 ns of work) 1.2-1.25 alone. Under 1.08 the hooks'
        # samples would be too few to tell apart from the program's.
        if whole < 1.08:
            fail("the hooks do not dominate with_calls (%.2f): the test shows nothing" % whole)
        # The hooks of with_calls' calls of tiny() before and after tiny's
        # frame are on with_calls' node: 28-70% of its samples (the lowest
        # with clang), none if they were taken for its own code.
        wshare = w["probe_samples"] / max(w["self_samples"] + w["probe_samples"], 1)
        if wshare < 0.15:
            fail("only %.0f%% of with_calls' samples are in the hooks of its calls" % (100 * wshare))
        # with_calls' own code does what without_calls' does. This ratio has
        # no low side: the multiply chain runs on while the hooks of tiny()
        # execute (out of order), and a sample's pc is where the oldest
        # instruction waits or a little after, so how much of the chain's
        # time shows in the hooks depends on the processor's state, not on
        # capprof: 0.5-0.7 alone, 0.20-0.32 in some runs beside cache-heavy
        # processes on the same cores. 'whole' bounds chain and hooks together.
        if ratio > 1.4:
            fail("with_calls' own CPU is %.2f times without_calls', not about the same" % ratio)
        # Program code taken for the hooks' is seen where no hook runs:
        # without_calls' node is on top through its own code and its 20
        # calls' hooks only, so nearly none of its samples are the hooks'.
        if wo["self_samples"] < 1000 or wo["probe_samples"] > 0.01 * wo["self_samples"]:
            fail("without_calls (no calls) has %d samples in its code, %d in the hooks: "
                 "its code is taken for the hooks'" % (wo["self_samples"], wo["probe_samples"]))
        if t["self_samples"] > 0.15 * wo["self_samples"]:
            fail("tiny's own CPU is %.2f times without_calls' (it increments a counter)"
                 % (t["self_samples"] / max(wo["self_samples"], 1)))
        if w["cpu_self_ns"] != w["self_samples"] * sampling["interval"]:
            fail("cpu_self_ns is not self_samples x interval")
    elif check == "prologue":
        b, o = func(doc, "big"), func(doc, "outer")
        print("samples: big %d, outer %d (self, program's own code)"
              % (b["self_samples"], o["self_samples"]))
        if b["self_samples"] + o["self_samples"] < 300:
            fail("only %d samples in big and outer (want >= 300)"
                 % (b["self_samples"] + o["self_samples"]))
        # big's prologue (64 page probes) is nearly all of the work; outer's
        # own code is a loop around the call.
        if b["self_samples"] < 0.6 * (b["self_samples"] + o["self_samples"]):
            fail("big's prologue is charged to outer: big %d, outer %d"
                 % (b["self_samples"], o["self_samples"]))
    elif check in ("unhook", "unhook_off"):
        # the program's output and the report: DUMP OUT REPORT
        out, report = open(dumps[1]).read(), open(dumps[2]).read()
        words = out.split()
        mids = int(words[words.index("mid") + 2])
        hubs = int(words[words.index("hub") + 2])
        if "checksum ok" not in out:
            fail("the program computed a wrong checksum: " + out)
        leaf, mid = func(doc, "leaf"), func(doc, "mid")
        lib = [f for f in doc["functions"] if f["name"].startswith("libuser")][0]
        outer = func(doc, "outer")
        print("calls: leaf %d mid %d (program: %d mid calls); samples: libuser %d outer %d"
              % (leaf["calls"], mid["calls"], mids, lib["self_samples"], outer["self_samples"]))
        hub = func(doc, "hub")
        at = report.find("[throttled]:")
        throttled = report[at:report.find("\n\n", at)] if at >= 0 else ""
        print("hub: %d calls (program: %d), %s" % (hub["calls"], hubs,
              "throttled" if "\n  hub:" in throttled else "not throttled"))
        if hub["calls"] != hubs:
            fail("hub's count not exact: %d, the program made %d" % (hub["calls"], hubs))
        # while sampling (unhooking or not), a frequent short caller is
        # throttled too; without sampling leaves only (run.sh checks that)
        if "\n  hub:" not in throttled:
            fail("hub (frequent, short, calls slow) not throttled while sampling:\n%s" % report)
        if check == "unhook_off":
            if "[unhooked]" in report:
                fail("unhooked with CAPPROF_UNHOOK=off")
            if leaf["calls"] != 2 * mids or mid["calls"] != mids:
                fail("counts not exact without unhooking")
        else:
            # the [unhooked] list: from its heading to the next blank line.
            # A hook call whose first two bytes straddle a 16-byte block is
            # never patched (runtime.md), so which functions stay hooked
            # depends on the code's layout: at least 3 in 4 must go, the 24
            # many* leaves (more than the 16 that learn at once) included.
            at = report.find("[unhooked]:")
            listed = report[at:report.find("\n\n", at)] if at >= 0 else ""
            names = ["leaf", "mid", "libuser", "rec"] + ["many%d" % k for k in range(24)]
            gone = [n for n in names if "\n  " + n + ("" if n == "libuser" else ":") in listed]
            print("unhooked: %d of %d (%s)" % (len(gone), len(names), " ".join(gone)))
            if len(gone) * 4 < len(names) * 3:
                fail("only %d of %d unhooked:\n%s" % (len(gone), len(names), report))
            # hub keeps its hooks: its callee slow has them
            if "\n  hub" in listed:
                fail("hub unhooked, though its callee slow keeps its hooks")
            if "rec" not in gone:
                fail("rec, which calls only itself, kept its hooks:\n%s" % report)
            many = sum(1 for n in gone if n.startswith("many"))
            if many <= 16:
                fail("%d of the 24 many* unhooked: none waited for a slot" % many)
            # an unhooked function's later calls are counted at its entry
            # by a counting stub (unhook.c): with the runtime linked into
            # the program, every entry call is within a stub's reach, and
            # its calls stay exact; only a call jumped over with the load
            # before it (Clang, a block's last byte) has no stub
            rounds = int(words[words.index("rounds") + 1])
            recs = int(words[words.index("rec") + 2])
            want = {"leaf": 2 * mids, "mid": mids, "libuser": rounds * 40, "rec": recs}
            want.update({"many%d" % k: rounds * 10 for k in range(24)})
            counted = 0
            for n in gone:
                f = func(doc, n) if n != "libuser" else lib
                before = f["calls"] - f.get("unhooked_calls", 0)
                if not f.get("unhooked_counted", False):
                    print("  %s: later calls not counted (%d before)" % (n, before))
                    if f["calls"] >= want[n]:
                        fail("%s unhooked, not counted after, but every call counted" % n)
                    continue
                counted += 1
                if f["calls"] != want[n]:
                    fail("%s: %d calls (%d after unhooking), the program made %d"
                         % (n, f["calls"], f["unhooked_calls"], want[n]))
                # format 1.9: the calls after unhooking are in the trees, per
                # call path (unhooked_calls: only those counted in no tree)
            print("unhooked and counted exactly after: %d of %d" % (counted, len(gone)))
            # every store into code followed by a core serialization of the
            # process's threads, where this kernel offers it (unhook.c)
            want_sync = membarrier_sync_core()
            for n in gone:
                f = func(doc, n) if n != "libuser" else lib
                if f.get("unhooked_synced") is not want_sync:
                    fail("%s: unhooked_synced %s, membarrier SYNC_CORE %s here"
                         % (n, f.get("unhooked_synced"), "available" if want_sync else "refused"))
            print("patches serialized on every core (membarrier): %s" % want_sync)
            if counted * 4 < len(gone) * 3:
                fail("only %d of %d unhooked functions counted after" % (counted, len(gone)))
            # while sampling, throttling decides at 10,000 calls (100,000
            # otherwise); then ~1,500 more calls to learn the hook calls
            # (when: the calls before unhooking are no longer told apart
            # from the stub's, which count in the same node, not timed)
            # libuser's time is the C library's memset, which the stack
            # scan charges to it though its node is no longer on top
            # (without the scan: libuser 311 samples, outer 12,180; with it,
            # 2.9-12 times outer's, whose own loop varies with the load)
            if "libuser" in gone and (lib["self_samples"] < outer["self_samples"] or
                                      lib["self_samples"] < 200):
                fail("memset's samples not charged to libuser: %d, outer %d"
                     % (lib["self_samples"], outer["self_samples"]))
    elif check == "deeprec":
        # outer's own loop is ~90% of the run, rec (5 calls a round) ~10%:
        # rec unhooked from an inner call once took 99.6% of the samples
        report = open(dumps[1]).read()
        o, r = func(doc, "outer"), func(doc, "rec")
        print("samples: outer %d, rec %d; rec %s" % (o["self_samples"], r["self_samples"],
              "unhooked" if "\n  rec:" in report else "hooked"))
        if o["self_samples"] < 200:
            fail("only %d samples in outer" % o["self_samples"])
        if r["self_samples"] > o["self_samples"]:
            fail("rec's samples (%d) above outer's (%d): frames of rec left on the stack"
                 % (r["self_samples"], o["self_samples"]))
    elif check == "unhook_filters":
        # DUMP OUT: filters renumber the nodes; an unhooked function's calls
        # after unhooking (the whole process's) stay its own with --hide,
        # and are left out, and said so, with --thread
        words = open(dumps[1]).read().split()
        mids = int(words[words.index("mid") + 2])
        out = subprocess.run([capprof, "export", "--format=json", "--hide=outer", dumps[0]],
                             check=True, capture_output=True, text=True).stdout
        hid = json.loads(out)
        m, l = func(hid, "mid"), func(hid, "leaf")
        print("--hide=outer: mid %d leaf %d (program: %d mid calls)" % (m["calls"], l["calls"], mids))
        if m.get("unhooked_counted") and (m["calls"] != mids or l["calls"] != 2 * mids):
            fail("--hide=outer: mid %d, leaf %d calls, the program made %d and %d"
                 % (m["calls"], l["calls"], mids, 2 * mids))
        tid = str(doc["threads"][0]["tid"])
        rep = subprocess.run([capprof, "report", "--thread=" + tid, dumps[0]], check=True,
                             capture_output=True, text=True).stdout
        # format 1.9: the calls after unhooking are the thread's own, in its
        # tree; nothing is left out, and report does not say so
        if "for the whole process only" in rep:
            fail("--thread: the calls after unhooking said to be the process's:\n" + rep)
        m = func(json.loads(subprocess.run([capprof, "export", "--format=json", "--thread=" + tid,
                                            dumps[0]], check=True, capture_output=True,
                                           text=True).stdout), "mid")
        # format 1.9: the calls after unhooking are in the thread's own tree
        if m["calls"] != mids:
            fail("--thread: mid has %d calls, the program made %d in that thread" % (m["calls"], mids))
    elif check == "unhook_threads":
        # DUMP OUT: tiny unhooked, its calls in all threads counted exactly
        words = open(dumps[1]).read().split()
        want = int(words[words.index("tiny") + 2])
        tiny = func(doc, "tiny")
        print("tiny: %d calls (program: %d), %s after unhooking, counted: %s"
              % (tiny["calls"], want, tiny.get("unhooked_calls"), tiny.get("unhooked_counted")))
        if "unhooked_calls" not in tiny:
            fail("tiny was not unhooked")
        if not tiny["unhooked_counted"] or tiny["calls"] != want:
            fail("tiny: %d calls counted, the program made %d" % (tiny["calls"], want))
    elif check == "ring":
        # The default sampling: a ring buffer per hooked thread, no signal.
        if "ring buffer" not in sampling["method"] or sampling["failed"]:
            fail("not sampled through the ring buffer: %r" % sampling)
        h, l = func(doc, "heavy")["cpu_self_ns"], func(doc, "light")["cpu_self_ns"]
        print("heavy %.1f ms light %.1f ms of CPU: ratio %.2f" % (h / 1e6, l / 1e6, h / max(l, 1)))
        if not 2.2 <= h / max(l, 1) <= 4.0:
            fail("heavy does 3 times light's work; its CPU time is %.2f times" % (h / max(l, 1)))
        per = sorted(sum(n["self_samples"] for n in t["nodes"] if n["name"] == "heavy")
                     for t in doc["threads"] if not t.get("sampled"))
        print("heavy's samples per thread:", per)
        if len(per) != 3 or per[0] < 20:
            fail("want heavy sampled in 3 threads, >= 20 samples each")
        child = load(capprof, dumps[1])
        cs = child["dumps"][0].get("sampling") or {}
        cw = func(child, "child_work")["self_samples"]
        print("fork child: child_work %d samples, method %r" % (cw, cs.get("method")))
        if cw < 20 or "ring buffer" not in cs.get("method", ""):
            fail("the fork child's own ring did not sample child_work")
        if any(f["name"] == "child_work" for f in doc["functions"]):
            fail("the parent's dump has child_work")
    elif check == "timer":
        # The default where perf_event_open is refused: the CPU-time timer,
        # every hooked thread sampled, the fork child's re-armed, the rate said.
        why = dumps[2]
        print("method:", sampling["method"], "| note:", sampling["note"])
        if "CPU-time timer" not in sampling["method"] or sampling["failed"]:
            fail("not sampled by the CPU-time timer: %r" % sampling)
        if why not in sampling["note"] or "Hz effective" not in sampling["note"]:
            fail("the note does not say why (%r) and the effective rate" % why)
        per = sorted(sum(n["self_samples"] for n in t["nodes"] if n["name"] == "heavy")
                     for t in doc["threads"] if not t.get("sampled"))
        print("heavy's samples per thread:", per)
        if len(per) != 3 or per[0] < 1:
            fail("want heavy sampled in each of 3 threads")
        child = load(capprof, dumps[1])
        cs = child["dumps"][0].get("sampling") or {}
        cw = func(child, "child_work")["self_samples"]
        print("fork child: child_work %d samples, method %r" % (cw, cs.get("method")))
        if cw < 1 or "CPU-time timer" not in cs.get("method", ""):
            fail("the fork child's timer did not sample child_work")
    elif check == "host_took":
        # The program reset the sampler's signal: timers deleted, recorded.
        print("note:", sampling["note"])
        if "stopped: the program" not in sampling["note"] or "timer was deleted" not in sampling["note"]:
            fail("the dump does not record that the program took the signal")
    elif check == "ring_once":
        # every thread sampled once: the CPU the samples give heavy is at
        # most its elapsed time (3 threads on this machine's processors)
        h = func(doc, "heavy")
        print("heavy: cpu %.1f ms, incl %.1f ms" % (h["cpu_ns"] / 1e6, h["incl_ns"] / 1e6))
        if h["cpu_ns"] > 1.15 * h["incl_ns"]:
            fail("heavy's sampled CPU exceeds its elapsed time: sampled twice")
    elif check == "ring_refused":
        # DUMP WORDS: the default sampling did not run, the reason said
        want = dumps[1]
        print("note:", sampling["note"])
        if not sampling["failed"] or want not in sampling["note"] or \
           "compensated" not in sampling["note"]:
            fail("want a failed default session whose note says %r and 'compensated'" % want)
        if any(f.get("self_samples") for f in doc["functions"]):
            fail("samples in a run that was not sampled")
        if any("unhooked_calls" in f for f in doc["functions"]):
            fail("unhooked without sampling")
    elif check == "signals":
        w = func(doc, "work")["pc_self_samples"]
        print("work samples", w)
        if w < 50:
            fail("too few samples in work()")
    else:
        fail("unknown check " + check)
    print("ok:", check)


main()
