#!/bin/sh
# perf.sh CAPPROF GEN_DUMP WORKDIR [LIMIT_S] -- times 'capprof report',
# 'capprof tree' and the JSON export on million-node dumps (a chain a million
# calls deep, a million children of one node, a 4-ary tree); each must finish
# within LIMIT_S seconds (default 3).
set -eu
CAPPROF=$1 GEN=$2 W=$3 LIMIT=${4:-3}
rm -rf "$W" && mkdir -p "$W" && cd "$W"
for kind in deep wide bushy; do
  "$GEN" $kind.capprof $kind 1000000
done
python3 - "$CAPPROF" "$LIMIT" <<'PY'
import subprocess, sys, time
capprof, limit = sys.argv[1], float(sys.argv[2])
slow = 0
for kind in ("deep", "wide", "bushy"):
    for cmd in (["report"], ["tree"], ["export", "--format=json"]):
        t0 = time.monotonic()
        subprocess.run([capprof] + cmd + [kind + ".capprof"], stdout=subprocess.DEVNULL, check=True)
        t = time.monotonic() - t0
        print(f"{kind:6} {' '.join(cmd):22} {t:6.2f} s {'ok' if t <= limit else 'SLOW'}")
        slow += t > limit
sys.exit(1 if slow else 0)
PY
