#!/bin/sh
# perf.sh CAPPROF GEN_DUMP WORKDIR [LIMIT_S] -- times 'capprof report' and
# 'capprof tree' on million-node dumps (a chain a million calls deep, a
# million children of one node, a 4-ary tree); each must finish within
# LIMIT_S seconds (default 3).
set -eu
CAPPROF=$1 GEN=$2 W=$3 LIMIT=${4:-3}
rm -rf "$W" && mkdir -p "$W" && cd "$W"
fails=0
for kind in deep wide bushy; do
  "$GEN" $kind.capprof $kind 1000000
  for cmd in report tree "export --format=json"; do
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$CAPPROF" $cmd $kind.capprof >/dev/null
    end=$(date +%s.%N)
    t=$(echo "$end - $start" | bc)
    ok=$(echo "$t <= $LIMIT" | bc)
    printf '%-6s %-22s %6.2f s %s\n' $kind "$cmd" "$t" "$([ "$ok" = 1 ] && echo ok || echo SLOW)"
    [ "$ok" = 1 ] || fails=$((fails + 1))
  done
done
exit $fails
