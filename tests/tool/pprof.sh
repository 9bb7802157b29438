#!/bin/sh
# pprof.sh CAPPROF CC RUNTIME_LIB WORKDIR -- the pprof export read back by
# 'go tool pprof' (check_pprof.py): one process, three processes in one
# file, and 'capprof merge' of the three into one dump exported to pprof.
# Exits 77 (skipped) only when go is absent; CI installs golang-go.
set -eu
CAPPROF=$1 CC=$2 LIB=$3 W=$4
HERE=$(cd "$(dirname "$0")" && pwd)
if ! command -v go >/dev/null 2>&1 || ! go tool pprof -h >/dev/null 2>&1; then
  echo "SKIP: no 'go tool pprof' (Debian: golang-go)"
  exit 77
fi
rm -rf "$W" && mkdir -p "$W" && cd "$W"
export GOCACHE="$W/gocache" GOPATH="$W/gopath" PPROF_TMPDIR="$W"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

$CC -O0 -g -finstrument-functions "$HERE/pprof_prog.c" "$LIB" -lpthread -o prog
for i in 1 2 3; do CAPPROF_OUTPUT="$W/prog.$i.capprof" ./prog >/dev/null; done
paths="main;work;spin SPIN4,worker;work;spin SPIN7,worker;spin SPIN3"
paths="$paths,main;down;down;down;down;down;down SPIN1,main SPIN1,worker;work SPIN1"
expect() { echo "$paths" | sed "s/ SPIN\([0-9]\)/=\$((\1 * $1))/g" | while read -r l; do eval "echo \"$l\""; done; }

"$CAPPROF" export --format=pprof -o one.pb.gz prog.1.capprof || fail "export"
gzip -t one.pb.gz || fail "not gzip"
python3 "$HERE/check_pprof.py" "$CAPPROF" one.pb.gz "$(expect 1)" prog.1.capprof ||
  fail "one process"

"$CAPPROF" export --format=pprof -o three.pb.gz prog.1.capprof prog.2.capprof prog.3.capprof ||
  fail "export of three"
python3 "$HERE/check_pprof.py" "$CAPPROF" three.pb.gz "$(expect 3)" \
  prog.1.capprof prog.2.capprof prog.3.capprof || fail "three processes"
n=$(go tool pprof -raw three.pb.gz | grep -o 'pid:\[[0-9]*\]' | sort -u | wc -l)
[ "$n" = 3 ] || fail "three processes: $n pid labels"

"$CAPPROF" merge -o merged.capprof prog.1.capprof prog.2.capprof prog.3.capprof || fail "merge"
"$CAPPROF" export --format=pprof -o merged.pb.gz merged.capprof || fail "export of the merge"
python3 "$HERE/check_pprof.py" "$CAPPROF" merged.pb.gz "$(expect 3)" merged.capprof ||
  fail "merged dump"

# the header: sample types, default, period, time and duration, a mapping
# with the build id, and a line per location
go tool pprof -raw one.pb.gz > raw.txt
grep -q '^calls/count cpu/nanoseconds\[dflt\] elapsed/nanoseconds$' raw.txt ||
  fail "sample types: $(grep -A1 '^Samples:' raw.txt)"
grep -q '^PeriodType: cpu nanoseconds$' raw.txt || fail "period type"
grep -q '^Time: ' raw.txt && grep -q '^Duration: ' raw.txt || fail "time, duration"
id=$(readelf -n prog | sed -n 's/.*Build ID: *//p')
grep -q "/prog $id \[FN\]\[FL\]\[LN\]" raw.txt || fail "mapping with build id $id"
grep -Eq ' spin .*pprof_prog.c:[0-9]+ ' raw.txt || fail "spin's location has no line"
# a location per sampled program counter, with its line: nearly all of
# spin's CPU time lies in its loop (lines 12-17), and -list shows it
go tool pprof -top -lines -unit=ns -sample_index=cpu one.pb.gz > lines.txt
awk '$NF ~ /pprof_prog\.c:/ && $(NF-1) == "spin" {
       n = $1; sub(/ns$/, "", n); split($NF, a, ":"); all += n
       if (a[2] >= 12 && a[2] <= 17) loop += n }
     END { exit !(all > 0 && loop >= 0.9 * all) }' lines.txt ||
  fail "-lines: spin's samples not on its loop's lines: $(cat lines.txt)"
go tool pprof -list '^spin$' one.pb.gz | grep -Eq '^ +[0-9.]+m?s .* 1[2-7]:' ||
  fail "-list spin shows no time in the loop (lines 12-17)"

[ "$fails" = 0 ] && echo "pprof: all checks passed"
exit "$fails"
