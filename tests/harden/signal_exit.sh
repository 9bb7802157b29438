#!/bin/sh
# signal_exit.sh BUILD SRC CC -- runs signal_exit.c in each mode RUNS times
# (default 20), each under a timeout: a run that hangs, fails or leaves no
# final dump fails the test.
set -eu
build=$1 src=$2 cc=$3 runs=${4:-20}
san=$(cat "$build/sanitize-flags" 2>/dev/null || true)   # a sanitized build
work=$build/tests/harden-work/signal_exit
rm -rf "$work"; mkdir -p "$work"; cd "$work"
"$cc" $san -O1 -g -finstrument-functions -I"$src/include" "$src/tests/harden/signal_exit.c" \
  "$build/libcapprof.a" -lpthread -ldl -o prog
"$cc" $san -O1 -g -fPIC -shared -finstrument-functions -I"$src/tests/e2e" \
  "$src/tests/e2e/dlclose_lib.c" -o lib.so
fail=0
for mode in dump threads dlclose; do
  hung=0 bad=0 i=0
  while [ $i -lt "$runs" ]; do
    i=$((i + 1))
    rm -f prog.*.capprof
    status=0
    CAPPROF_OUTPUT="$work/%n.%p.capprof" timeout 10 ./prog $mode "$work" "$work/lib.so" \
      >out.txt 2>err.txt || status=$?
    if [ $status -eq 124 ]; then hung=$((hung + 1)); continue; fi
    if [ $status -ne 0 ] || [ -s err.txt ] || ! ls prog.*.capprof >/dev/null 2>&1; then
      bad=$((bad + 1)); echo "$mode run $i: status $status"; cat err.txt
      continue
    fi
    "$build/capprof" info prog.*.capprof >/dev/null
  done
  echo "$mode: $runs runs, $hung hung, $bad failed"
  [ $hung -eq 0 ] && [ $bad -eq 0 ] || fail=1
done
exit $fail
