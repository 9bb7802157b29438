#!/bin/sh
# golden.sh CAPPROF WORKDIR GOLDEN PROGRAM [ARGS...] -- [CAPPROF ARGS...]:
# runs PROGRAM (an instrumented example) with its dump in WORKDIR, runs
# 'capprof CAPPROF-ARGS DUMP', masks times (mask.py) and compares with the
# GOLDEN file. CAPPROF_UPDATE_GOLDEN=1 rewrites the golden file instead.
set -eu
CAPPROF=$1 W=$2 GOLDEN=$3
shift 3
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$W" && mkdir -p "$W"
prog=
for a; do
  shift
  [ "$a" = -- ] && break
  prog="$prog '$a'"
done
# The hooks' times only (samples differ run to run): CAPPROF_SAMPLE=off.
eval "CAPPROF_SAMPLE=off CAPPROF_OUTPUT='$W/run.capprof' $prog" >/dev/null
"$CAPPROF" "$@" "$W/run.capprof" | python3 "$HERE/mask.py" >"$W/out.txt"
if [ "${CAPPROF_UPDATE_GOLDEN:-0}" = 1 ]; then
  cp "$W/out.txt" "$GOLDEN"
  echo "golden: wrote $GOLDEN"
  exit 0
fi
diff -u "$GOLDEN" "$W/out.txt"
