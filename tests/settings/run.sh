#!/bin/sh
# run.sh HELLO SETTINGS_DEF WORK -- the runtime's start-up report of its
# settings: an unknown CAPPROF_* name is named once on stderr and ignored,
# known ones (runtime's and tool's) are not; CAPPROF_HELP=1 prints every
# entry of src/core/settings.def and the program runs on; nothing on stderr
# otherwise.
set -u
HELLO=$1 DEF=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
cd "$WORK" || exit 1
fail() { echo "FAIL: $*"; for f in out err; do echo "--- $f"; cat "$f" 2>/dev/null; done; exit 1; }
run() {   # run VAR=VALUE...: HELLO with only these CAPPROF_* variables
  env $(env | sed -n 's/^\(CAPPROF_[^=]*\)=.*/-u \1/p') CAPPROF_OUTPUT="$WORK/" "$@" \
    "$HELLO" >out 2>err
  rc=$?
  [ "$rc" = 0 ] || fail "exit status $rc"
  grep -qx 'main ran, runtime active 1' out || fail "main did not run with the runtime active"
}

# Known variables only: not a word on stderr.
run CAPPROF_SAMPLE=off CAPPROF_PAGER=cat CAPPROF_LIBRARY=/nowhere CAPPROF_HELP=0
[ -s err ] && fail "known variables: something on stderr"

# Two unknown names (one misspelt, one near a real one): one line each.
run CAPPROF_SAMPLE=off CAPPROF_SAMPEL=time:1ms CAPPROF_OUTPUT_DIRS=x CAPPROF_VERBOSE=0
[ "$(wc -l <err)" = 2 ] || fail "unknown names: not two lines on stderr"
for v in CAPPROF_SAMPEL CAPPROF_OUTPUT_DIRS; do
  [ "$(grep -c "^capprof: unknown variable $v ignored" err)" = 1 ] || fail "$v: not warned once"
done

# CAPPROF_HELP=1: a heading, then one line per SETTING of the .def with its
# type and default, then the program as usual.
run CAPPROF_SAMPLE=off CAPPROF_HELP=1
grep -q '^capprof: settings (CAPPROF_HELP=1)' err || fail "help: no heading"
n=0
for v in $(sed -n 's/^SETTING(\([A-Z0-9_]*\),.*/\1/p' "$DEF"); do
  grep -q "^  CAPPROF_$v  *\(bool\|u32\|text\|tool\)  " err || fail "help: no line for CAPPROF_$v"
  n=$((n + 1))
done
[ "$n" -ge 19 ] || fail "help: only $n settings in $DEF"
[ "$(wc -l <err)" = $((n + 1)) ] || fail "help: not $((n + 1)) lines"
grep -q '^  CAPPROF_MAX_NODES  *u32  *4194304  .*(16\.\.1073741824)$' err || fail "help: CAPPROF_MAX_NODES's default and range"
grep -q '^  CAPPROF_SAMPLE  *text  *auto  ' err || fail "help: CAPPROF_SAMPLE's default"
# A relative CAPPROF_OUTPUT_DIR is where the program started, even when it
# changes directory before the dump (make -C, ninja -C).
mkdir -p start/runs start/sub start/sub/runs
(cd start && env $(env | sed -n 's/^\(CAPPROF_[^=]*\)=.*/-u \1/p') CAPPROF_SAMPLE=off \
   CAPPROF_OUTPUT_DIR=runs CAPPROF_OUTPUT=hello.capprof "$HELLO" sub >../out 2>../err) ||
  fail "CAPPROF_OUTPUT_DIR=runs: exit status $?"
[ -s start/runs/hello.capprof ] || fail "CAPPROF_OUTPUT_DIR=runs: no dump in the starting directory's runs/"
[ -e start/sub/runs/hello.capprof ] && fail "CAPPROF_OUTPUT_DIR=runs: resolved after the chdir"
echo "ok: unknown names warned once each, CAPPROF_HELP=1 lists $n settings, the program runs on;"
echo "ok: a relative CAPPROF_OUTPUT_DIR is resolved at start-up"
