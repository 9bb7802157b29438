#!/usr/bin/env python3
"""hookcost.py -- what the hooks cost per call, read from the built machine code.

    bench/hookcost.py [--objdump TOOL] FILE [FUNCTION...]

FILE is the built runtime (libcapprof.a, libcapprof.so, capprof.dll or one
object). Without FUNCTION, the hook entry points found in it are used:
__cyg_profile_func_enter/exit, __fentry__, __return__ and their C workers
(posix_fentry_enter/exit), _penter/_pexit. Prints one table per entry point, from `objdump -d`:

  path      the fall-through path: from the entry to the first ret or
            unconditional jmp, every conditional branch not taken (the
            compilers lay the hooks' fast path out this way; where a table
            shows a call on that path, the path is not the fast one)
  function  every instruction of the function, whatever runs

and in each: instructions, loads, stores, conditional branches, calls.
A load or store is an instruction with a memory operand that reads or
writes it (a read-modify-write counts once in each); push/call count as a
store, pop/ret as a load; lea and nop touch no memory. The hand-written
"Cost:" comments this replaces drifted from the code: run this instead.
"""
import re
import subprocess
import sys

DEFAULT = ["__cyg_profile_func_enter", "__cyg_profile_func_exit", "__fentry__",
           "__return__", "posix_fentry_enter", "posix_fentry_exit", "_penter", "_pexit"]

NO_MEM = ("lea", "nop", "prefetch")
READ_ONLY = ("cmp", "test", "bt", "ucomis", "comis")
WRITE_ONLY = ("mov", "set", "stos", "movs", "cmov")   # cmov only reads mem as source


def parse(objdump, path):
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", "-w", path],
                         check=True, capture_output=True, text=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
        if m:
            cur = funcs.setdefault(m.group(2), [])
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(.*)$", line)
        if m and cur is not None:
            text = re.sub(r"\s+#.*$", "", m.group(2)).strip()
            if text and not text.startswith("(bad)"):
                cur.append((int(m.group(1), 16), text))
    return funcs


def classify(text):
    """(load, store, cond_branch, call, ends_path) of one AT&T instruction."""
    parts = text.split(None, 1)
    op = parts[0]
    if op in ("lock", "rep", "repz", "repnz", "notrack", "bnd", "data16") and len(parts) > 1:
        parts = parts[1].split(None, 1)
        op = parts[0]
    args = parts[1] if len(parts) > 1 else ""
    load = store = 0
    if op.startswith("push"):
        store = 1
    elif op.startswith("pop"):
        load = 1
    elif op.startswith("call"):
        store = 1
        if "(" in args or "*" in args and "%" not in args:
            load += 1
    elif op.startswith("ret"):
        load = 1
    elif "(" in args and not op.startswith(NO_MEM):
        ops = re.split(r",(?![^(]*\))", args)
        mem_last = "(" in ops[-1]
        if not mem_last or op.startswith(READ_ONLY):
            load = 1
        elif op.startswith(WRITE_ONLY) and not op.startswith("cmov"):
            store = 1
        else:
            load = store = 1                      # read-modify-write
    cond = 1 if re.match(r"^j(?!mp)[a-z]+$", op) or op.startswith("loop") else 0
    call = 1 if op.startswith("call") else 0
    ends = op.startswith("ret") or op.startswith("jmp") or op in ("ud2", "hlt")
    return load, store, cond, call, ends


def count(insns):
    n = [0, 0, 0, 0, 0]
    for _, text in insns:
        ld, st, cb, ca, _ = classify(text)
        n[0] += 1; n[1] += ld; n[2] += st; n[3] += cb; n[4] += ca
    return n


def fall_through(insns):
    path = []
    for ins in insns:
        path.append(ins)
        if classify(ins[1])[4]:
            break
    return path


def main(argv):
    objdump = "objdump"
    if len(argv) > 2 and argv[1] == "--objdump":
        objdump = argv[2]
        argv = argv[:1] + argv[3:]
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    funcs = parse(objdump, argv[1])
    names = argv[2:] or [n for n in DEFAULT if n in funcs]
    if not names:
        print("hookcost.py: no hook entry point in %s" % argv[1], file=sys.stderr)
        return 1
    for name in names:
        if name not in funcs:
            print("hookcost.py: %s not in %s" % (name, argv[1]), file=sys.stderr)
            return 1
        insns = funcs[name]
        print("%s (%s)" % (name, argv[1]))
        print("  %-9s %6s %6s %6s %9s %6s" % ("", "insns", "loads", "stores", "cond.br.", "calls"))
        for label, part in (("path", fall_through(insns)), ("function", insns)):
            print("  %-9s %6d %6d %6d %9d %6d" % ((label,) + tuple(count(part))))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
