#!/bin/sh
# perf.sh CAPPROF GEN_DUMP WORKDIR [LIMIT_S] -- times 'capprof report',
# 'capprof tree' and the JSON export on million-node dumps (a chain a million
# calls deep, a million children of one node, a 4-ary tree); each must use at
# most LIMIT_S seconds of CPU time (default 3).
set -eu
CAPPROF=$1 GEN=$2 W=$3 LIMIT=${4:-3}
rm -rf "$W" && mkdir -p "$W" && cd "$W"
for kind in deep wide bushy; do
  "$GEN" $kind.capprof $kind 1000000
done
python3 - "$CAPPROF" "$LIMIT" <<'PY'
# The limit applies to the CPU time the tool used (user + system): on a
# shared machine under load the wall-clock time measures the neighbours.
import resource, subprocess, sys, time
capprof, limit = sys.argv[1], float(sys.argv[2])
slow = 0
for kind in ("deep", "wide", "bushy"):
    for cmd in (["report"], ["tree"], ["export", "--format=json"]):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        subprocess.run([capprof] + cmd + [kind + ".capprof"], stdout=subprocess.DEVNULL, check=True)
        t = time.monotonic() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        print(f"{kind:6} {' '.join(cmd):22} {cpu:6.2f} s CPU ({t:5.2f} s wall) {'ok' if cpu <= limit else 'SLOW'}")
        slow += cpu > limit
sys.exit(1 if slow else 0)
PY
