#!/bin/sh
# churn.sh BUILD SRC CC [N] -- 200,000 short-lived threads (default) in an
# instrumented program: afterwards it must still create threads, map and
# allocate memory and exit 0; memory mappings must not grow with the number
# of ended threads; the dump must read, with every call counted exactly, the
# threads past the kept number merged (capprof info says so).
set -eu
build=$1 src=$2 cc=$3 n=${4:-200000}
san=$(cat "$build/sanitize-flags" 2>/dev/null || true)   # a sanitized build
work=$build/tests/harden-work/churn
rm -rf "$work"; mkdir -p "$work"; cd "$work"
"$cc" $san -O2 -g -finstrument-functions "$src/tests/harden/churn.c" "$build/libcapprof.a" \
  -lpthread -ldl -o churn
status=0
E2E_MAP=map CAPPROF_OUTPUT="$work/%n.%p.capprof" ./churn "$n" 4 > out.txt 2> err.txt || status=$?
cat out.txt
[ $status -eq 0 ] || { echo "FAIL: exit status $status"; cat err.txt; exit 1; }
[ -s err.txt ] && { echo "FAIL: stderr"; cat err.txt; exit 1; }
# Mappings added over the churn: a fixed few (the arena, merge groups), not
# one per thread: fewer than 1 per 1000 ended threads.
per=$(sed -n 's/.*maps_per_thread=\([0-9.]*\).*/\1/p' out.txt)
awk -v p="$per" 'BEGIN { exit !(p < 0.001) }' || { echo "FAIL: $per mappings per ended thread"; exit 1; }
dump=$(ls churn.*.capprof)
# Every call: 3 work() per thread (n, and 200 after the churn), 1 in main.
cat > expect <<EOT
total thread_main $((n + 200))
total work $((3 * (n + 200) + 1))
total main 1
merged-at-least $((n - 4096 - 64))
EOT
"$build/tests/e2e_check" "$dump" map expect
"$build/capprof" info "$dump" > info.txt
grep -q 'merged: .* ended threads named "churn-odd" that started in thread_main' info.txt ||
  { echo "FAIL: capprof info does not show the merge"; grep -A1 merged info.txt; exit 1; }
echo "ok: churn ($n threads)"
