#!/usr/bin/env bash
# bench/run.sh -- capprof's benchmark suite (docs/performance.md). Builds the
# workloads with GCC and with Clang, runs every variant interleaved (plain,
# capprof, uftrace, gprof) and prints each figure as a ratio measured in this
# run: minima over repetitions, so that a shared, noisy machine still gives
# stable ratios.
#
#   bench/run.sh                 full suite, ~4 min: builds build-bench/{gcc,clang}
#   bench/run.sh --quick         smoke run, small sizes, ~30 s
#   bench/run.sh --build DIR     use an existing build tree only (its compiler)
#   bench/run.sh --jobs N        parallel build jobs (default 2)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
quick=0
builds=()
jobs=2
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --build) builds+=("$2"); shift ;;
    --jobs) jobs=$2; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

if [ $quick = 1 ]; then
  D=17; R=1; ROUNDS=1; WIDE=110; BIG=300; DEEP=100000; TD=16; T64D=10; TREPS=2; PEER_ROUNDS=1
else
  D=22; R=3; ROUNDS=5; WIDE=120; BIG=1000; DEEP=200000; TD=21; T64D=16; TREPS=9; PEER_ROUNDS=3
fi

# ---- build ------------------------------------------------------------------
if [ ${#builds[@]} -eq 0 ]; then
  for cc in gcc clang; do
    command -v $cc >/dev/null || { echo "run.sh: $cc not found, skipped" >&2; continue; }
    b=$root/build-bench/$cc
    cmake -S "$root" -B "$b" -DCMAKE_C_COMPILER=$cc -DCMAKE_BUILD_TYPE=Release \
      -DCAPPROF_BUILD_TESTS=OFF -DCAPPROF_BUILD_EXAMPLES=OFF >/dev/null
    cmake --build "$b" -j"$jobs" >/dev/null
    builds+=("$b")
  done
else
  for b in "${builds[@]}"; do cmake --build "$b" -j"$jobs" >/dev/null; done
fi

tmp=$(mktemp -d /tmp/capprof-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export CAPPROF_OUTPUT="$tmp/%n.%p.capprof"

# kv LINE KEY: the value of KEY=value in LINE
kv() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" <<<"$1"; }
# fmin A B: the smaller number, A may be empty
fmin() { if [ -z "$1" ]; then echo "$2"; else awk -v a="$1" -v b="$2" 'BEGIN{print (a<b)?a:b}'; fi; }
calc() { awk "BEGIN{printf \"%.${2:-2}f\", $1}"; }
ok() { if awk "BEGIN{exit !($1)}"; then echo met; else echo MISSED; fi; }
now_ns() { date +%s%N; }
cleandumps() { rm -f "$tmp"/*.capprof; }

table=()
row() { table+=("$(printf '%-58s %-22s %-16s %s' "$1" "$2" "$3" "$4")"); }

echo "capprof benchmarks ($( [ $quick = 1 ] && echo quick || echo full )), $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cpus, $(uname -r)"
echo "every figure: minimum over interleaved repetitions in this run; times are thread CPU time"

# best_of VAR ROUNDS CMD...: minimum best_ns (and floor) over ROUNDS runs,
# interleaved by the caller one round at a time.
declare -A best floor_min floor_ord wall_min rss ov
run_wl() {   # run_wl TAG CMD... : one run, keep minima under TAG
  local tag=$1; shift
  local t0 t1 out
  t0=$(now_ns)
  out=$("$@")
  t1=$(now_ns)
  best[$tag]=$(fmin "${best[$tag]:-}" "$(kv "$out" best_ns)")
  floor_min[$tag]=$(fmin "${floor_min[$tag]:-}" "$(kv "$out" floor_ns)")
  floor_ord[$tag]=$(fmin "${floor_ord[$tag]:-}" "$(kv "$out" floor_ordered_ns)")
  wall_min[$tag]=$(fmin "${wall_min[$tag]:-}" $((t1 - t0)))
  rss[$tag]=$(kv "$out" rss_kb)
  calls=$(kv "$out" calls)
  cleandumps
}

floor_all=""
for b in "${builds[@]}"; do
  cc=$(basename "$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$b/CMakeCache.txt" | head -1)")
  w=$b/bench
  case "$cc" in *clang*) flag="-finstrument-functions-after-inlining"; target=1.5 ;;
                *) flag="-finstrument-functions"; target=2.0 ;; esac
  echo; echo "== $cc ($flag) =="

  # (a) call-heavy recursion: plain, capprof (static, default clock), capprof
  # with CAPPROF_CLOCK=tsc-fast, capprof shared (PLT), interleaved.
  for ((i = 0; i < ROUNDS; i++)); do
    run_wl "$cc.plain" "$w/wl_plain" rec $D $R
    run_wl "$cc.cap" "$w/wl_cap" rec $D $R
    CAPPROF_CLOCK=tsc-fast run_wl "$cc.fast" "$w/wl_cap" rec $D $R
    run_wl "$cc.so" "$w/wl_capso" rec $D $R
  done
  ncalls=$calls
  fl=$(fmin "$(fmin "${floor_min[$cc.cap]}" "${floor_min[$cc.plain]}")" "${floor_min[$cc.fast]}")
  floor_all=$(fmin "$floor_all" "$fl")
  flo=$(fmin "$(fmin "${floor_ord[$cc.cap]}" "${floor_ord[$cc.plain]}")" "${floor_ord[$cc.fast]}")
  for v in cap fast so; do
    ov[$v]=$(calc "(${best[$cc.$v]} - ${best[$cc.plain]}) / $ncalls" 2)
  done
  echo "(a) rec depth $D: $ncalls calls x $R reps x $ROUNDS rounds; floor (2 rdtsc) $(calc $fl 2) ns;" \
       "ordered floor (rdtsc+rdtscp) $(calc $flo 2) ns;" \
       "plain $(calc "${best[$cc.plain]}/$ncalls" 2) ns/call"
  row "(a) overhead/call, $cc static, default clock (rdtsc+rdtscp)" "${ov[cap]} ns = $(calc "${ov[cap]}/$fl") x floor" "<= ${target}x floor" "$(ok "${ov[cap]}/$fl <= $target")"
  row "    same vs ordered floor (rdtsc+rdtscp, $(calc $flo 2) ns)" "$(calc "${ov[cap]}/$flo") x ordered floor" "-" "-"
  row "(a) overhead/call, $cc static, CAPPROF_CLOCK=tsc-fast" "${ov[fast]} ns = $(calc "${ov[fast]}/$fl") x floor" "<= ${target}x floor" "$(ok "${ov[fast]}/$fl <= $target")"
  row "(a) overhead/call, $cc shared (libcapprof.so via PLT)" "${ov[so]} ns = $(calc "${ov[so]}/$fl") x floor" "-" "-"

  # Peers on the same workload, -pg build: uftrace record --no-libcall, gprof.
  # One repetition per process (uftrace keeps every event), interleaved.
  if [ -x "$w/wl_pg" ]; then
    for ((i = 0; i < PEER_ROUNDS; i++)); do
      run_wl "$cc.pplain" "$w/wl_plain" rec $D 1
      run_wl "$cc.pcap" "$w/wl_cap" rec $D 1
      if command -v uftrace >/dev/null; then
        run_wl "$cc.uftrace" uftrace record --no-libcall -d "$tmp/uftrace.data" "$w/wl_pg" rec $D 1
        rm -rf "$tmp/uftrace.data"
      fi
      run_wl "$cc.gprof" env -C "$tmp" "$w/wl_pg" rec $D 1   # writes gmon.out there
      rm -f "$tmp/gmon.out"
    done
    pcap=$(calc "(${best[$cc.pcap]} - ${best[$cc.pplain]}) / $ncalls" 2)
    pcapw=$(calc "(${wall_min[$cc.pcap]} - ${wall_min[$cc.pplain]}) / $ncalls" 2)
    if [ -n "${best[$cc.uftrace]:-}" ]; then
      uft=$(calc "(${best[$cc.uftrace]} - ${best[$cc.pplain]}) / $ncalls" 2)
      uftw=$(calc "(${wall_min[$cc.uftrace]} - ${wall_min[$cc.pplain]}) / $ncalls" 2)
      row "(a) uftrace record --no-libcall, $cc -pg: overhead/call" "$uft ns = $(calc "$uft/$pcap") x capprof" ">= 2.5x capprof" "$(ok "$uft/$pcap >= 2.5")"
      row "    same, whole process wall time incl. writing" "$uftw ns = $(calc "$uftw/$pcapw") x capprof ($pcapw)" "-" "-"
    fi
    gp=$(calc "(${best[$cc.gprof]} - ${best[$cc.pplain]}) / $ncalls" 2)
    gpw=$(calc "(${wall_min[$cc.gprof]} - ${wall_min[$cc.pplain]}) / $ncalls" 2)
    row "(a) gprof (-pg, mcount), $cc: overhead/call" "$gp ns = $(calc "$gp/$pcap") x capprof" "-" "-"
    row "    same, whole process wall time" "$gpw ns = $(calc "$gpw/$pcapw") x capprof ($pcapw)" "-" "-"
  fi

  # (b) wide tree: a new call path on almost every call (hot cache misses).
  for ((i = 0; i < ROUNDS; i++)); do
    run_wl "$cc.wplain" "$w/wl_plain" wide $WIDE $R
    run_wl "$cc.wcap" "$w/wl_cap" wide $WIDE $R
  done
  wv=$(calc "(${best[$cc.wcap]} - ${best[$cc.wplain]}) / $calls" 2)
  row "(b) wide: $calls calls, $calls call paths: overhead/call" "$wv ns = $(calc "$wv/$fl") x floor" "-" "-"

  # (c) deep recursion on a 1 GiB thread stack.
  for ((i = 0; i < ROUNDS; i++)); do
    run_wl "$cc.dplain" "$w/wl_plain" deep $DEEP $R
    run_wl "$cc.dcap" "$w/wl_cap" deep $DEEP $R
  done
  dv=$(calc "(${best[$cc.dcap]} - ${best[$cc.dplain]}) / $calls" 2)
  row "(c) deep: depth $DEEP: overhead/call" "$dv ns = $(calc "$dv/$fl") x floor" "-" "-"

  # (d) threads: per-call overhead with 1, 2 and 64 busy threads.
  for ((i = 0; i < ROUNDS; i++)); do
    for n in 1 2; do
      run_wl "$cc.t${n}plain" "$w/wl_plain" threads $n $TD $R
      run_wl "$cc.t${n}cap" "$w/wl_cap" threads $n $TD $R
    done
    run_wl "$cc.t64plain" "$w/wl_plain" threads 64 $T64D 1
    run_wl "$cc.t64cap" "$w/wl_cap" threads 64 $T64D 1
  done
  tcalls=$(( (2 << TD) - 1 )); t64calls=$(( (2 << T64D) - 1 ))
  t1=$(calc "(${best[$cc.t1cap]} - ${best[$cc.t1plain]}) / $tcalls" 2)
  t2=$(calc "(${best[$cc.t2cap]} - ${best[$cc.t2plain]}) / $tcalls" 2)
  t64=$(calc "(${best[$cc.t64cap]} - ${best[$cc.t64plain]}) / $t64calls" 2)
  row "(d) 2 busy threads vs 1: overhead/call" "$t2 vs $t1 ns = $(calc "$t2/$t1") x" "<= 1.10x" "$(ok "$t2/$t1 <= 1.10")"
  row "(d) 64 threads vs 1: overhead/call" "$t64 vs $t1 ns = $(calc "$t64/$t1") x" "-" "-"
  bpt=$(( (${rss[$cc.t64cap]} - ${rss[$cc.t64plain]}) * 1024 / 64 ))
  row "(d) bytes per thread (RSS, 64 threads, after join)" "$bpt B" "-" "-"

  # (e) ground truth: exclusive/inclusive error, compensated and raw.
  "$w/bench_truth" $TREPS "$tmp/truth.capprof" > "$tmp/truth.txt"
  cleandumps
  echo "(e) ground truth, $(grep '^calib' "$tmp/truth.txt")"
  printf '    %-6s %9s %9s %8s %8s %9s %9s %8s %8s\n' fn truth_ex comp_ex err% raw_err% truth_in comp_in err% raw_err%
  while read -r line; do
    [ "${line%% *}" = truth ] || continue
    fn=$(kv "$line" fn); te=$(kv "$line" truth_excl); ce=$(kv "$line" comp_excl_err)
    printf '    %-6s %9s %9s %8s %8s %9s %9s %8s %8s\n' "$fn" "$te" "$(kv "$line" comp_excl)" \
      "$ce" "$(kv "$line" raw_excl_err)" "$(kv "$line" truth_incl)" "$(kv "$line" comp_incl)" \
      "$(kv "$line" comp_incl_err)" "$(kv "$line" raw_incl_err)"
    a=${ce#-}; ra=$(kv "$line" raw_excl_err); ra=${ra#-}
    if awk "BEGIN{exit !($te >= 1000)}"; then
      row "(e) excl error, $fn (${te} ns self, >= 1 us)" "$ce % (raw $ra %)" "<= 5 %" "$(ok "$a <= 5")"
    elif awk "BEGIN{exit !($te >= 100)}"; then
      row "(e) excl error, $fn (${te} ns self, >= 100 ns)" "$ce % (raw $ra %)" "<= 15 %" "$(ok "$a <= 15")"
    else
      row "(e) excl error, $fn (${te} ns self, tiny)" "$ce % (raw $ra %)" "-" "-"
    fi
    if [ "$fn" = root ]; then
      ti=$(kv "$line" comp_incl_err); tia=${ti#-}
      row "(e) total time error (root inclusive)" "$ti % (raw $(kv "$line" raw_incl_err) %)" "<= 5 %" "$(ok "$tia <= 5")"
    fi
  done < "$tmp/truth.txt"
  # Same, with the fast clock, for comparison.
  CAPPROF_CLOCK=tsc-fast "$w/bench_truth" $TREPS "$tmp/truth.capprof" > "$tmp/truthf.txt"
  cleandumps
  worst=$(awk '/^truth/ { for (i=2;i<=NF;i++) { split($i,kv,"="); v[kv[1]]=kv[2] }
                 e=v["comp_excl_err"]; if (e<0) e=-e
                 if (v["truth_excl"]>=100 && e>w) { w=e; f=v["fn"] } } END { printf "%.1f %% (%s)", w, f }' "$tmp/truthf.txt")
  row "(e) worst excl error >= 100 ns, CAPPROF_CLOCK=tsc-fast" "$worst" "(<= 15 %)" "-"

  # (f) a real program: the capprof tool itself, on the (b) dump.
  if [ -x "$w/capprof_cap" ]; then
    "$w/wl_cap" wide $WIDE 1 >/dev/null
    in=$(ls "$tmp"/wl_cap.*.capprof | head -1); mv "$in" "$tmp/in.cpd"
    for ((i = 0; i < ROUNDS; i++)); do
      for v in plain cap; do
        t0=$(now_ns); "$w/capprof_$v" tree "$tmp/in.cpd" >/dev/null; t1=$(now_ns)
        wall_min[$cc.f$v]=$(fmin "${wall_min[$cc.f$v]:-}" $((t1 - t0)))
        if [ $v = cap ]; then mv "$(ls "$tmp"/capprof_cap.*.capprof | head -1)" "$tmp/f.cpd"; fi
      done
      if command -v uftrace >/dev/null; then
        t0=$(now_ns); uftrace record --no-libcall -d "$tmp/uftrace.data" "$w/capprof_pg" tree "$tmp/in.cpd" >/dev/null; t1=$(now_ns)
        wall_min[$cc.fuft]=$(fmin "${wall_min[$cc.fuft]:-}" $((t1 - t0))); rm -rf "$tmp/uftrace.data"
      fi
      t0=$(now_ns); env -C "$tmp" "$w/capprof_pg" tree "$tmp/in.cpd" >/dev/null; t1=$(now_ns)
      wall_min[$cc.fgprof]=$(fmin "${wall_min[$cc.fgprof]:-}" $((t1 - t0))); rm -f "$tmp/gmon.out"
    done
    fcalls=$("$w/bench_dumpstat" "$tmp/f.cpd" | sed -n 's/.*calls=\([0-9]*\).*/\1/p')
    fo=$(calc "(${wall_min[$cc.fcap]} - ${wall_min[$cc.fplain]}) / $fcalls" 2)
    row "(f) capprof tree (instrumented itself), $fcalls calls: overhead/call" "$fo ns; run time $(calc "${wall_min[$cc.fcap]}/${wall_min[$cc.fplain]}") x plain" "-" "-"
    if [ -n "${wall_min[$cc.fuft]:-}" ]; then
      fu=$(calc "(${wall_min[$cc.fuft]} - ${wall_min[$cc.fplain]}) / $fcalls" 2)
      row "(f) same under uftrace record --no-libcall (-pg)" "$fu ns = $(calc "$fu/$fo") x capprof" ">= 2.5x capprof" "$(ok "$fu/$fo >= 2.5")"
    fi
    fg=$(calc "(${wall_min[$cc.fgprof]} - ${wall_min[$cc.fplain]}) / $fcalls" 2)
    row "(f) same with gprof (-pg)" "$fg ns = $(calc "$fg/$fo") x capprof" "-" "-"
    cleandumps
  fi
done

# ---- memory and report time (first build) ----------------------------------
b=${builds[0]}; w=$b/bench
"$w/wl_plain" wide $BIG 1 > "$tmp/big_plain.txt"
"$w/wl_cap" wide $BIG 1 > "$tmp/big_cap.txt"
big=$(ls "$tmp"/wl_cap.*.capprof | head -1); mv "$big" "$tmp/big.cpd"
stat=$("$w/bench_dumpstat" "$tmp/big.cpd")
nodes=$(kv "$stat" nodes)
dbytes=$(stat -c %s "$tmp/big.cpd")
drss=$(( ($(kv "$(cat "$tmp/big_cap.txt")" rss_kb) - $(kv "$(cat "$tmp/big_plain.txt")" rss_kb)) * 1024 ))
row "bytes per node in memory (RSS, $nodes nodes)" "$(calc "$drss/$nodes" 1) B (struct $(kv "$stat" node_struct) B)" "<= 64 B" "$(ok "$drss/$nodes <= 64")"
row "dump bytes per node" "$(calc "$dbytes/$nodes" 1) B" "-" "-"
tool=$b/capprof
for cmd in report tree; do
  if "$tool" $cmd --help >/dev/null 2>&1; then
    tbest=""
    for ((i = 0; i < 3; i++)); do
      t0=$(now_ns); "$tool" $cmd "$tmp/big.cpd" >/dev/null; t1=$(now_ns)
      tbest=$(fmin "$tbest" $((t1 - t0)))
    done
    row "capprof $cmd on a $nodes-node dump (wall)" "$(calc "$tbest/1e9" 2) s" "<= 3 s" "$(ok "$tbest/1e9 <= 3")"
  else
    row "capprof $cmd on a $nodes-node dump" "(no '$cmd' command in this build)" "<= 3 s" "n/a"
  fi
done
t0=$(now_ns); "$w/bench_dumpstat" "$tmp/big.cpd" >/dev/null; t1=$(now_ns)
row "cpd_load of the $nodes-node dump (reader only)" "$(calc "($t1-$t0)/1e9" 2) s" "-" "-"

echo
echo "== results: overhead per call (entry+exit), floor = 2 back-to-back rdtsc = $(calc $floor_all 2) ns =="
printf '%-58s %-22s %-16s %s\n' figure measured target status
for r in "${table[@]}"; do echo "$r"; done
