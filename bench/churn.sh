#!/usr/bin/env bash
# bench/churn.sh -- thread churn cost (issue 11): the same program
# (tests/harden/churn.c: N short-lived threads, 4 at a time, 3 calls each)
# built plain and with capprof, run interleaved; prints the slowdown (minimum
# churn time over repetitions, capprof / plain; target <= 1.5) and the memory
# mappings added per ended thread (target 0).
#   bench/churn.sh [--build DIR] [--threads N] [--reps R]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=$root/build n=100000 reps=3
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift ;;
    --threads) n=$2; shift ;;
    --reps) reps=$2; shift ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "churn.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
cc=${CC:-gcc}
tmp=$(mktemp -d /tmp/capprof-churn.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
$cc -O2 "$root/tests/harden/churn.c" -lpthread -o "$tmp/plain"
$cc -O2 -finstrument-functions "$root/tests/harden/churn.c" "$build/libcapprof.a" \
  -lpthread -ldl -o "$tmp/cap"
kv() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" <<<"$1"; }
best_plain=999999 best_cap=999999 maps=0
for ((r = 0; r < reps; r++)); do
  out=$("$tmp/plain" "$n" 4 | head -n 1)
  best_plain=$(awk -v a="$best_plain" -v b="$(kv "$out" seconds)" 'BEGIN { print (b < a ? b : a) }')
  out=$(CAPPROF_OUTPUT="$tmp/%n.%p.capprof" "$tmp/cap" "$n" 4 | head -n 1)
  best_cap=$(awk -v a="$best_cap" -v b="$(kv "$out" seconds)" 'BEGIN { print (b < a ? b : a) }')
  maps=$(kv "$out" maps_per_thread)
  rm -f "$tmp"/*.capprof
done
$cc -O1 -finstrument-functions -I"$root/include" "$here/dumpmem.c" "$build/libcapprof.a" \
  -lpthread -ldl -o "$tmp/dumpmem"
(cd "$tmp" && CAPPROF_OUTPUT="$tmp/final.capprof" ./dumpmem "$tmp/mid.capprof")
awk -v n="$n" -v p="$best_plain" -v c="$best_cap" -v m="$maps" 'BEGIN {
  printf "churn: %d threads (4 at a time), best of %s: plain %.3f s, capprof %.3f s\n", n, "'"$reps"'", p, c
  printf "churn slowdown: %.2fx the uninstrumented program (target <= 1.5)\n", c / p
  printf "mappings per ended thread: %.5f (target 0)\n", m
}'
