#!/bin/sh
# runs_cli.sh TOOL GEN WORK -- report, CSV and diff over runs whose values are
# known (written by test_zone_runs --write): zone "work" takes 1, 2, 3, 4, 5 us
# in runs a.1..a.5 (mean 3 us, sample sd 1.58 us), 10 us more in b.1..b.5;
# zone "rare" 0.6 us in two runs of five; "work" left open in two runs.
set -u
tool=$1 gen=$2 work=$3
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
"$gen" --write . || exit 1

"$tool" report a.*.capprof >report.txt 2>warn.txt || fail "report exited with $?"
cat report.txt warn.txt
grep -q '^5 runs, 5 threads; elapsed per run 3.00 us, spread 1.58 us (sd), 1.00 us to 5.00 us$' \
  report.txt || fail "report header"
# self = work - rare: 1000, 1400, 3000, 3400, 5000 ns: mean 2760, sd 1614.9
grep -Eq '^ +2\.76 us +1\.61 us +1\.00 us +5\.00 us +3.00 us +1.58 us +2 +5/5 +work  \[zone\]$' report.txt ||
  fail "work: self 2.76 +- 1.61 us (1 to 5), total 3.00 +- 1.58 us, 2 calls, 5/5"
grep -Eq '^ +240 ns +329 ns +0 ns +600 ns +240 ns +329 ns +0\.4 +2/5 +rare  \[zone\]$' report.txt ||
  fail "rare: mean 240 ns over 5 runs, sd 329 ns, in 2 of 5 runs"
grep -q 'zone "work": 2 never ended .*(in 2 of 5 runs)' warn.txt || fail "warning for work"

"$tool" export --format=csv -o a.csv a.*.capprof || fail "csv"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  $1 == "work" { ok = $col["runs"] == 5 && $col["incl_ns_mean"] == 3000 &&
                      $col["incl_ns_sd"] == 1581 && $col["incl_ns_run1"] == 1000 &&
                      $col["incl_ns_run5"] == 5000 && $col["calls_run3"] == 2 }
  $1 == "rare" { ok2 = $col["runs"] == 2 && $col["incl_ns_run2"] == 600 &&
                       $col["incl_ns_run1"] == 0 }
  END { exit !(ok && ok2) }' a.csv || fail "csv per-run columns: $(cat a.csv)"

"$tool" diff --sort=total a.*.capprof -- b.*.capprof >diff.txt || fail "diff exited with $?"
cat diff.txt
grep -Eq '3\.00 us \+- 1\.58 us +13\.0 us \+- 1\.58 us +\+10\.0 us +10\.00 +real +work  \[zone\]$' diff.txt ||
  fail "diff: work +10 us is real (t = 10)"
grep -Eq ' +noise +rare  \[zone\]$' diff.txt || fail "diff: rare gone is within its spread"
"$tool" diff a.1.capprof a.2.capprof a.3.capprof -- a.4.capprof a.5.capprof >same.txt ||
  fail "diff of a split set"
grep -Eq ' noise +work  \[zone\]$' same.txt || fail "diff within one set is noise: $(cat same.txt)"

[ $fails = 0 ] && echo "ok: statistics across runs, known values" && exit 0
echo "runs_cli: $fails failures"
exit 1
