#!/bin/sh
# wine-emulator.sh -- CMAKE_CROSSCOMPILING_EMULATOR of the MinGW-w64 cross
# build: runs a Windows test program under wine. Every test program prints
# before it can fail, so an exit with a non-zero status and no output at all
# means the program never started: wine could not launch it (the CI run of
# 2026-11-26 lost win.test_regs so, in 0.00 s, between two tests that passed;
# 20 runs by hand then passed). Such a launch is retried once, and said on
# stderr; a program that ran and failed is never retried.
# usage: wine-emulator.sh WINE PROGRAM [ARG...]
WINE=$1
shift
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
rc=0
"$WINE" "$@" >"$out" 2>"$err" || rc=$?
if [ "$rc" -ne 0 ] && [ ! -s "$out" ] && { [ ! -s "$err" ] || grep -q "wine client error" "$err"; }; then
  echo "wine-emulator.sh: $1 exited $rc before printing anything; launched once more" >&2
  cat "$err" >&2
  sleep 2
  rc=0
  "$WINE" "$@" >"$out" 2>"$err" || rc=$?
fi
cat "$out"
cat "$err" >&2
exit "$rc"
