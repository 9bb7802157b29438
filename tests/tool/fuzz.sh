#!/bin/sh
# fuzz.sh FUZZER GEN_DUMP CAPPROF SECONDS -- builds a seed corpus of small
# valid dumps, runs the dump reader's libFuzzer target for SECONDS, then runs
# the real tool (with the ELF symbolizer) over every input the fuzzer kept:
# each must end with status 0, 1 or 3 (never a signal) within 10 seconds.
set -eu
FUZZER=$1 GEN=$2 CAPPROF=$3 SECONDS_=$4
rm -rf corpus && mkdir corpus
"$GEN" corpus/small small 8
"$GEN" corpus/zones zones 6
"$GEN" corpus/deep deep 40
"$GEN" corpus/bushy bushy 30
"$FUZZER" -max_total_time="$SECONDS_" -rss_limit_mb=2048 -max_len=65536 \
  -print_final_stats=1 corpus 2>fuzz.log || { tail -40 fuzz.log; exit 1; }
grep -E '^(Done|stat::peak_rss)' fuzz.log || true
n=0 bad=0
for f in corpus/*; do
  for cmd in report tree info "export --format=json" "export --format=speedscope" \
             "export --format=callgrind" "export --format=folded" "export --format=csv" \
             "callers main" "merge -o merged.tmp"; do
    set +e
    # shellcheck disable=SC2086
    timeout 10 "$CAPPROF" $cmd "$f" >/dev/null 2>&1
    rc=$?
    set -e
    case $rc in
      0|1|3) ;;
      *) echo "capprof $cmd $f: status $rc"; bad=$((bad + 1)) ;;
    esac
    n=$((n + 1))
  done
done
echo "tool runs over the corpus: $n, bad: $bad"
[ $bad = 0 ]
