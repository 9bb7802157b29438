#!/bin/sh
# runs.sh TOOL ZONES CC LIBCAPPROF INCLUDE WORK -- the zones-only example
# profiled over five runs into an output directory with one file per run
# (%t); report with per-zone means, spreads and runs present, and a warning
# about the zone left open; info's warning; merge keeps the mismatch counts;
# CSV per-run columns; diff over
# two sets of runs; an unwritable output directory (one line on stderr, exit
# status kept); CAPPROF_DISABLE.
set -u
tool=$1 zones=$2 cc=$3 lib=$4 inc=$5 work=$6
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
rm -rf "$work"
mkdir -p "$work/runs"
cd "$work" || exit 1

for i in 1 2 3 4 5; do
  CAPPROF_OUTPUT_DIR=runs CAPPROF_OUTPUT='%n.%t.capprof' "$zones" 200 >out.txt 2>err.txt ||
    fail "run $i exited with $?"
  [ -s err.txt ] && fail "run $i wrote to stderr: $(cat err.txt)"
done
n=$(ls runs/*.capprof 2>/dev/null | wc -l)
[ "$n" = 5 ] || fail "5 runs made $n dumps: $(ls runs)"

"$tool" report runs/*.capprof >report.txt 2>warn.txt || fail "report exited with $?"
cat report.txt warn.txt
grep -q '^5 runs' report.txt || fail "report does not say 5 runs"
grep -Eq ' 50 +5/5 +handle get  \[zone\]$' report.txt || fail "handle get: 50 calls per run in 5/5 runs"
grep -Eq ' 200 +5/5 +request  \[zone\]$' report.txt || fail "request: 200 calls per run"
grep -Eq ' 5/5 +render  \[zone\]$' report.txt || fail "render in 5/5 runs"
grep -q 'warning: zone "handle delete": 85 never ended .*(in 5 of 5 runs)' warn.txt ||
  fail "no warning about the zone left open"
[ "$(wc -l <warn.txt)" = 1 ] || fail "one warning expected"

one=$(ls runs/*.capprof | head -n 1)
"$tool" info "$one" >info.txt || fail "info exited with $?"
grep -q 'warning: zone "handle delete" in tid [0-9]*: 17 never ended' info.txt ||
  fail "info: $(tail -3 info.txt)"

"$tool" export --format=csv -o runs.csv runs/*.capprof || fail "export csv"
head -n 1 runs.csv | grep -q ',runs,self_ns_mean,self_ns_sd,.*,calls_run5' ||
  fail "csv header: $(head -n 1 runs.csv)"
grep -q '^handle get,' runs.csv || fail "csv has no handle get row"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  $1 == "handle get" { if ($col["runs"] != 5 || $col["calls_mean"] != "50.000" ||
                           $col["calls_sd"] != "0.000" || $col["calls_run3"] != 50) exit 1 }' \
  runs.csv || fail "csv per-run values of handle get"

"$tool" merge -o merged.capprof runs/*.capprof || fail "merge"
"$tool" info merged.capprof | grep -q 'warning: zone "handle delete" in tid [0-9]*: 85 never ended' ||
  fail "merged dump lost the zone mismatch counts"

set -- runs/*.capprof
"$tool" diff "$1" "$2" -- "$3" "$4" "$5" >diff.txt || fail "diff exited with $?"
cat diff.txt
grep -q '2 runs before, 3 runs after' diff.txt || fail "diff header"
grep -Eq '(real|noise|same) +handle get  \[zone\]$' diff.txt || fail "diff verdict for handle get"
"$tool" diff "$1" -- "$3" >diff1.txt || fail "diff of one run each"
grep -q 'two runs or more' diff1.txt || fail "diff with one run per side must say so"

# An output directory that cannot be written: the program runs on, its exit
# status is kept, and one line on stderr says why.
cat >status.c <<'C'
#include <capprof/capprof.h>
int main(void) { CAPPROF_ZONE_BEGIN("x"); return 3; }
C
"$cc" -DCAPPROF_ENABLED -I"$inc" status.c "$lib" -lpthread -ldl -o status || fail "build status.c"
CAPPROF_OUTPUT_DIR=/etc/passwd/not-a-dir ./status 2>err.txt
st=$?
[ "$st" = 3 ] || fail "exit status $st, expected 3"
[ "$(wc -l <err.txt)" = 1 ] || fail "stderr: $(cat err.txt)"
grep -q '^capprof: cannot write dump /etc/passwd/not-a-dir/status\.[0-9]*\.capprof: ' err.txt ||
  fail "message: $(cat err.txt)"
CAPPROF_OUTPUT_DIR="$work/runs" ./status 2>err.txt
[ $? = 3 ] && [ ! -s err.txt ] || fail "good directory: $(cat err.txt)"
ls runs/status.*.capprof >/dev/null 2>&1 || fail "no dump in the output directory"
"$tool" info runs/status.*.capprof | grep -q 'zone "x" in tid [0-9]*: 1 still open at exit' ||
  fail "zone open at exit not reported"

rm -rf off && mkdir off
CAPPROF_DISABLE=1 CAPPROF_OUTPUT_DIR=off ./status 2>err.txt
[ $? = 3 ] && [ ! -s err.txt ] && [ -z "$(ls off)" ] || fail "CAPPROF_DISABLE"

[ $fails = 0 ] && echo "ok: zones over runs" && exit 0
echo "zones runs: $fails failures"
exit 1
