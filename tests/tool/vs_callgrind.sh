#!/bin/sh
# vs_callgrind.sh CAPPROF CLANG RUNTIME_LIB WORKDIR -- builds calls.c with
# Clang's hooks after inlining (at -O0 and -O2), runs it natively (capprof
# dump) and under valgrind --tool=callgrind, and requires identical
# per-function call counts.
set -eu
CAPPROF=$1 CLANG=$2 LIB=$3 W=$4
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$W" && mkdir -p "$W"
for opt in -O0 -O2; do
  mkdir "$W/$opt" && cd "$W/$opt"
  echo "== clang $opt"
  "$CLANG" $opt -gdwarf-4 -finstrument-functions-after-inlining "$HERE/calls.c" "$LIB" \
    -lpthread -o calls
  ./calls >/dev/null
  set -- calls.*.capprof
  "$CAPPROF" export --format=csv -o capprof.csv "$1"
  mkdir vg && cd vg
  valgrind -q --tool=callgrind --callgrind-out-file=cg.out ../calls >/dev/null
  python3 "$HERE/vs_callgrind.py" ../capprof.csv cg.out
done
