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
#   bench/run.sh --no-build      with --build: run what is built (CTest)
#   bench/run.sh --jobs N        parallel build jobs (default 2)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
quick=0
builds=()
jobs=2
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --build) builds+=("$(cd "$2" && pwd)"); shift ;;
    --jobs) jobs=$2; shift ;;
    --no-build) build=0 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

if [ $quick = 1 ]; then
  D=17; R=2; ROUNDS=1; WIDE=110; BIG=300; DEEP=100000; TD=16; T64D=10; TREPS=8; TPROCS=1; TSECS=1; PEER_ROUNDS=1; FW=110
else
  D=22; R=3; ROUNDS=3; WIDE=120; BIG=1000; DEEP=200000; TD=21; T64D=16; TREPS=40; TPROCS=3; TSECS=10; PEER_ROUNDS=3; FW=600
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
  if [ $build = 1 ]; then
    for b in "${builds[@]}"; do cmake --build "$b" -j"$jobs" >/dev/null; done
  fi
fi

tmp=$(mktemp -d /tmp/capprof-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export CAPPROF_OUTPUT="$tmp/%n.%p.capprof"
# The hooks' own costs and compensated times: no sampling (the default
# samples through a ring buffer and unhooks), except where a row says so.
export CAPPROF_SAMPLE=off

# kv LINE KEY: the value of KEY=value in LINE
kv() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" <<<"$1"; }
# fmin A B: the smaller number, A may be empty
fmin() { if [ -z "$1" ]; then echo "$2"; else awk -v a="$1" -v b="$2" 'BEGIN{print (a<b)?a:b}'; fi; }
calc() { awk "BEGIN{printf \"%.${2:-2}f\", $1}"; }
# sgn EXPR [DIGITS]: like calc, with its sign (+1.5, -0.3)
sgn() { awk "BEGIN{printf \"%+.${2:-2}f\", $1}"; }
ok() { if awk "BEGIN{exit !($1)}"; then echo met; else echo MISSED; fi; }
# truth_row LABEL TRUTH_NS ERR: one (e) row, with the target for a function of
# that size: >= 1 us within 5 %, >= 100 ns within 15 %, none below
truth_row() {
  local a=${3#-}
  if awk "BEGIN{exit !($2 >= 1000)}"; then row "$1 (>= 1 us)" "$3 %" "<= 5 %" "$(ok "$a <= 5")"
  elif awk "BEGIN{exit !($2 >= 100)}"; then row "$1 (>= 100 ns)" "$3 %" "<= 15 %" "$(ok "$a <= 15")"
  else row "$1 (tiny)" "$3 %" "-" "-"; fi
}
now_ns() { date +%s%N; }
cleandumps() { rm -f "$tmp"/*.capprof; }

table=()
row() { table+=("$(printf '%-58s %-22s %-16s %s' "$1" "$2" "$3" "$4")"); }

echo "capprof benchmarks ($( [ $quick = 1 ] && echo quick || echo full )), $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cpus, $(uname -r)"
echo "every figure: minimum over interleaved repetitions in this run; times are thread CPU time"

declare -A mn wall_min rss
# (wall_min holds process CPU time, user + system, of the command and its
# descendants: bench_cputime.)
# run_wl TAG CMD...: run one wl process; keep, under TAG, the minima of its
# phase times (plain_ns inst_ns inst_first_ns floor_ns floor_ord_ns) and of
# the whole process's CPU time.
run_wl() {
  local tag=$1; shift
  local t0 t1 out k
  out=$("$cputime" "$tmp/cpu.txt" "$@")
  for k in plain_ns inst_ns inst_first_ns floor_ns floor_ord_ns; do
    mn[$tag.$k]=$(fmin "${mn[$tag.$k]:-}" "$(kv "$out" $k)")
  done
  wall_min[$tag]=$(fmin "${wall_min[$tag]:-}" "$(kv "$(cat "$tmp/cpu.txt")" cpu_ns)")
  rss[$tag]=$(kv "$out" rss_kb)
  calls=$(kv "$out" calls)
  cleandumps
}
# ov TAG [inst_ns|inst_first_ns]: overhead per call (ns) from TAG's minima
ov() { calc "(${mn[$1.${2:-inst_ns}]} - ${mn[$1.plain_ns]}) / $calls" 2; }
fl() { calc "${mn[$1.floor_ns]} / $calls" 2; }
flo() { calc "${mn[$1.floor_ord_ns]} / $calls" 2; }
# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }

floor_all=""
for b in "${builds[@]}"; do
  cc=$(basename "$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$b/CMakeCache.txt" | head -1)")
  w=$b/bench
  cputime=$w/bench_cputime
  case "$cc" in *clang*) flag="-finstrument-functions-after-inlining"; target=1.5 ;;
                *) flag="-finstrument-functions"; target=2.0 ;; esac
  echo; echo "== $cc ($flag) =="

  # (a) call-heavy recursion: capprof static with the default clock and
  # with CAPPROF_CLOCK=tsc-fast, and shared (PLT), rounds interleaved. By
  # default the recursion's deepest calls (half of them) are throttled, so
  # the figure averages timed and untimed calls; CAPPROF_THROTTLE=off times
  # every call: what a call costs until its node is throttled.
  for ((i = 0; i < ROUNDS; i++)); do
    run_wl "$cc.cap" "$w/wl_cap" rec $D $R
    CAPPROF_CLOCK=tsc-fast run_wl "$cc.fast" "$w/wl_cap" rec $D $R
    run_wl "$cc.so" "$w/wl_capso" rec $D $R
    CAPPROF_THROTTLE=off run_wl "$cc.all" "$w/wl_cap" rec $D $R
  done
  f=$(fl "$cc.cap"); fo=$(flo "$cc.cap")
  floor_all=$(fmin "$floor_all" "$f")
  oc=$(ov "$cc.cap"); of=$(ov "$cc.fast"); os=$(ov "$cc.so")
  echo "(a) rec depth $D: $calls calls x $R reps x $ROUNDS processes; floor (rdtsc+rdtsc) $f ns," \
       "ordered floor (rdtsc+rdtscp) $fo ns; plain $(calc "${mn[$cc.cap.plain_ns]}/$calls" 2) ns/call"
  row "(a) overhead/call, $cc static, default clock" "$oc ns = $(calc "$oc/$f") x floor" "<= ${target}x floor" "$(ok "$oc/$f <= $target")"
  row "    same against the ordered floor ($fo ns)" "$(calc "$oc/$fo") x ordered floor" "<= ${target}x" "$(ok "$oc/$fo <= $target")"
  row "(a) overhead/call, $cc static, CAPPROF_CLOCK=tsc-fast" "$of ns = $(calc "$of/$(fl "$cc.fast")") x floor" "<= ${target}x floor" "$(ok "$of/$(fl "$cc.fast") <= $target")"
  row "(a) overhead/call, $cc shared (libcapprof.so, PLT)" "$os ns = $(calc "$os/$(fl "$cc.so")") x floor" "-" "-"
  oa=$(ov "$cc.all")
  row "(a) overhead/call, $cc static, CAPPROF_THROTTLE=off" "$oa ns = $(calc "$oa/$(fl "$cc.all")") x floor" "-" "-"

  # Peers on the same workload, -pg build: uftrace record --no-libcall, and
  # gprof. One repetition per process (uftrace keeps every event); the plain
  # copy in the same process is the baseline; wall time against wl_plain.
  for ((i = 0; i < PEER_ROUNDS; i++)); do
    run_wl "$cc.pplain" "$w/wl_plain" rec $D 1
    run_wl "$cc.pcap" "$w/wl_cap" rec $D 1
    if command -v uftrace >/dev/null; then
      run_wl "$cc.uft" uftrace record --no-libcall -d "$tmp/uftrace.data" "$w/wl_pg" rec $D 1
      rm -rf "$tmp/uftrace.data"
    fi
    run_wl "$cc.gprof" env -C "$tmp" "$w/wl_pg" rec $D 1      # writes gmon.out there
    rm -f "$tmp/gmon.out"
  done
  pc=$(ov "$cc.pcap" inst_first_ns)
  pcw=$(calc "(${wall_min[$cc.pcap]} - ${wall_min[$cc.pplain]}) / $calls" 2)
  if [ -n "${mn[$cc.uft.inst_ns]:-}" ]; then
    u=$(ov "$cc.uft" inst_first_ns)
    uw=$(calc "(${wall_min[$cc.uft]} - ${wall_min[$cc.pplain]}) / $calls" 2)
    row "(a) uftrace record --no-libcall ($cc -pg): overhead/call" "$u ns = $(calc "$u/$pc") x capprof ($pc)" ">= 2.5x capprof" "$(ok "$u/$pc >= 2.5")"
    row "    same, whole-process CPU time (incl. its writer)" "$uw ns = $(calc "$uw/$pcw") x capprof ($pcw)" "-" "-"
  fi
  g=$(ov "$cc.gprof" inst_first_ns)
  gw=$(calc "(${wall_min[$cc.gprof]} - ${wall_min[$cc.pplain]}) / $calls" 2)
  row "(a) gprof ($cc -pg; counts calls, no timing): overhead/call" "$g ns = $(calc "$g/$pc") x capprof" "-" "-"
  row "    same, whole-process CPU time" "$gw ns = $(calc "$gw/$pcw") x capprof" "-" "-"

  # (b) wide tree, (c) deep recursion: steady state and first run (tree built).
  for ((i = 0; i < ROUNDS; i++)); do run_wl "$cc.wide" "$w/wl_cap" wide $WIDE $R; done
  row "(b) wide: $calls calls on $calls paths: overhead/call" "$(ov "$cc.wide") ns (first run $(ov "$cc.wide" inst_first_ns))" "-" "-"
  for ((i = 0; i < ROUNDS; i++)); do run_wl "$cc.deep" "$w/wl_cap" deep $DEEP $R; done
  row "(c) deep: depth $DEEP: overhead/call" "$(ov "$cc.deep") ns (first run $(ov "$cc.deep" inst_first_ns))" "-" "-"

  # (d) threads: per-call overhead with 1, 2 and 64 busy threads at once.
  for ((i = 0; i < ROUNDS; i++)); do
    run_wl "$cc.t1" "$w/wl_cap" threads 1 $TD $R
    run_wl "$cc.t2" "$w/wl_cap" threads 2 $TD $R
  done
  t1=$(ov "$cc.t1"); t2=$(ov "$cc.t2")
  row "(d) 2 busy threads vs 1: overhead/call" "$t2 vs $t1 ns = $(calc "$t2/$t1") x" "<= 1.10x" "$(ok "$t2/$t1 <= 1.10")"
  for ((i = 0; i < ROUNDS; i++)); do
    run_wl "$cc.t64p" "$w/wl_plain" threads 64 $T64D 2
    run_wl "$cc.t64" "$w/wl_cap" threads 64 $T64D 2
  done
  t64=$(ov "$cc.t64")
  row "(d) 64 threads ($calls calls each) vs 1: overhead/call" "$t64 ns = $(calc "$t64/$t1") x" "-" "-"
  bpt=$(( (${rss[$cc.t64]} - ${rss[$cc.t64p]}) * 1024 / 64 ))
  row "(d) bytes per thread (RSS, 64 threads, trees kept)" "$bpt B" "-" "-"

  # (e) ground truth: errors of exclusive/inclusive times, compensated and
  # raw; median over TPROCS processes (each calibrates once at start-up).
  : > "$tmp/truth.txt"; : > "$tmp/truthf.txt"; : > "$tmp/tool.txt"
  for ((i = 0; i < TPROCS; i++)); do
    "$w/bench_truth" $TREPS "$tmp/truth.capprof" > "$tmp/truth1.txt"
    cat "$tmp/truth1.txt" >> "$tmp/truth.txt"
    # What the tool reports for this process's best dump, against its truth.
    if "$b/capprof" export --format=csv "$tmp/truth.capprof.best" > "$tmp/truth.csv" 2>/dev/null; then
      awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
               { fn = $col["function"]; sub(/^cap_/, "", fn); c = $col["calls"]
                 if (c > 0) printf "tool fn=%s self=%.1f total=%.1f\n", fn,
                   $col["self_ns"] / c, $col["incl_ns"] / c }' "$tmp/truth.csv" > "$tmp/tool1.txt"
      while read -r line; do
        fn=$(kv "$line" fn)
        t=$(grep "^truth fn=$fn " "$tmp/truth1.txt")
        echo "tool fn=$fn excl_err=$(calc "100*($(kv "$line" self) - $(kv "$t" truth_excl))/$(kv "$t" truth_excl)" 1)" \
             "incl_err=$(calc "100*($(kv "$line" total) - $(kv "$t" truth_incl))/$(kv "$t" truth_incl)" 1)"
      done < "$tmp/tool1.txt" >> "$tmp/tool.txt"
    fi
    rm -f "$tmp/truth.capprof.best"
    CAPPROF_CLOCK=tsc-fast "$w/bench_truth" $TREPS "$tmp/truth.capprof" >> "$tmp/truthf.txt"
    cleandumps
  done
  echo "(e) ground truth, median of $TPROCS processes; calibration seen:" \
       $(grep '^calib' "$tmp/truth.txt" | sed 's/calib //' | tr '\n' ';')
  printf '    %-6s %9s %9s %8s %8s %9s %9s %8s %8s\n' fn truth_ex comp_ex err% raw_err% truth_in comp_in err% raw_err%
  for fn in root fan heavy mid small tiny nano; do
    med() { grep -E "^(truth|tool) fn=$fn " "$1" | sed -n "s/.* $2=\([^ ]*\).*/\1/p" | median; }
    te=$(med "$tmp/truth.txt" truth_excl); ce=$(med "$tmp/truth.txt" comp_excl_err)
    re=$(med "$tmp/truth.txt" raw_excl_err); ci=$(med "$tmp/truth.txt" comp_incl_err)
    ri=$(med "$tmp/truth.txt" raw_incl_err); fe=$(med "$tmp/truthf.txt" comp_excl_err)
    printf '    %-6s %9s %9s %8s %8s %9s %9s %8s %8s\n' "$fn" "$te" "$(med "$tmp/truth.txt" comp_excl)" \
      "$ce" "$re" "$(med "$tmp/truth.txt" truth_incl)" "$(med "$tmp/truth.txt" comp_incl)" "$ci" "$ri"
    a=${ce#-}; fa=${fe#-}
    if awk "BEGIN{exit !($te >= 1000)}"; then lim=5; cls=">= 1 us"
    elif awk "BEGIN{exit !($te >= 100)}"; then lim=15; cls=">= 100 ns"
    else lim=""; cls="tiny"; fi
    if [ -n "$lim" ]; then
      row "(e) excl error, $fn ($te ns self, $cls)" "$ce % (raw $re %)" "<= $lim %" "$(ok "$a <= $lim")"
      row "    same with CAPPROF_CLOCK=tsc-fast" "$fe %" "<= $lim %" "$(ok "$fa <= $lim")"
    else
      row "(e) excl error, $fn ($te ns self, $cls)" "$ce % (raw $re %; tsc-fast $fe %)" "-" "-"
    fi
    if [ "$fn" = root ]; then
      a=${ci#-}
      row "(e) total time error (root inclusive)" "$ci % (raw $ri %)" "<= 5 %" "$(ok "$a <= 5")"
    fi
    if grep -q "^tool fn=$fn " "$tmp/tool.txt"; then
      tx=$(med "$tmp/tool.txt" excl_err); tn=$(med "$tmp/tool.txt" incl_err)
      row "    as 'capprof export' reports it (best 1 ms dump)" "excl $tx %, incl $tn %" "-" "-"
    fi
  done

  # (e) again with the hooks 'capprof cflags' recommends for this compiler,
  # where they differ (GCC: -pg -mfentry -minstrument-return=call).
  if [ -x "$w/bench_truth_rec" ]; then
    : > "$tmp/truthr.txt"
    for ((i = 0; i < TPROCS; i++)); do
      "$w/bench_truth_rec" $TREPS "$tmp/truthr.capprof" >> "$tmp/truthr.txt"
      rm -f "$tmp/truthr.capprof.best"
    done
    echo "(e) ground truth with the recommended hooks ($("$b/capprof" cflags "$cc")), median of $TPROCS processes"
    printf '    %-6s %9s %9s %8s %8s %9s %9s %8s\n' fn truth_ex comp_ex err% raw_err% truth_in comp_in err%
    for fn in root fan heavy mid small tiny nano; do
      te=$(med "$tmp/truthr.txt" truth_excl); ce=$(med "$tmp/truthr.txt" comp_excl_err)
      printf '    %-6s %9s %9s %8s %8s %9s %9s %8s\n' "$fn" "$te" "$(med "$tmp/truthr.txt" comp_excl)" \
        "$ce" "$(med "$tmp/truthr.txt" raw_excl_err)" "$(med "$tmp/truthr.txt" truth_incl)" \
        "$(med "$tmp/truthr.txt" comp_incl)" "$(med "$tmp/truthr.txt" comp_incl_err)"
      truth_row "(e) recommended hooks: excl error, $fn" "$te" "$ce"
    done
  fi

  # (e) sampled: the same truth against each function's sampled CPU self time
  # (CAPPROF_SAMPLE, so with unhooking: 'capprof report' ranks by it), over
  # TSECS seconds of CPU in one process without resets, per real call. The
  # check is each function's share of the program's CPU against its share of
  # the truth (where the samples put the time); the total, the sampled
  # program's own CPU per root call against the plain one's over a long run,
  # is shown beside it (a sample costs the thread ~25-30 us on this VM).
  # With the recommended hooks where they differ: GCC's -finstrument-functions
  # ends these functions (they return nothing) with a tail jump to the exit
  # hook, which unhooking cannot patch (docs/runtime.md).
  truthbin=$w/bench_truth
  [ -x "$w/bench_truth_rec" ] && truthbin=$w/bench_truth_rec
  # timer: the default's fallback where perf_event_open is refused (the
  # CPU-time timer, on the scheduler tick).
  for spec in auto timer time:250us; do
  rm -f "$tmp/truths.capprof"
  tag="sampled, CAPPROF_SAMPLE=$spec"
  [ "$spec" != auto ] || tag="default (ring buffer)"
  [ "$spec" != timer ] || tag="default without perf (CAPPROF_SAMPLE=timer)"
  if "$truthbin" --plain 2 > "$tmp/truthp.txt" &&
     CAPPROF_SAMPLE=$spec "$truthbin" --sampled $TSECS "$tmp/truths.capprof" > "$tmp/truths.txt" &&
     "$b/capprof" export --format=csv "$tmp/truths.capprof" > "$tmp/truths.csv" 2>/dev/null &&
     grep -q cpu_self_ns "$tmp/truths.csv"; then
    for fn in root fan heavy mid small tiny nano; do
      echo "$fn $(med "$tmp/truth.txt" truth_excl) $(kv "$(grep "^sampled fn=$fn " "$tmp/truths.txt")" calls)"
    done > "$tmp/truths.in"
    awk -F, -v plain="$(kv "$(cat "$tmp/truthp.txt")" root_cpu_ns)" -v bin="$(basename "$truthbin")" -v tag="$tag" '
      FNR == NR { split($0, w, " "); te[w[1]] = w[2]; n[w[1]] = w[3]; T += w[2] * w[3]
                  order[++k] = w[1]; next }
      FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
      { f = $col["function"]; sub(/^cap_/, "", f)
        if (f in te) { cs[f] = $col["cpu_self_ns"]; C += cs[f]; S += $col["self_samples"] } }
      END {
        if (C <= 0 || T <= 0 || !(n["root"] > 0)) { print "(e) " tag ": no samples in the program"; exit }
        printf "(e) %s (%s, %d samples in the program): cpu self per call; share = of all CPU\n", tag, bin, S
        printf "    %-6s %9s %9s %8s %10s\n", "fn", "truth_ex", "cpu_ex", "err%", "share_err%"
        tvd = 0
        for (i = 1; i <= k; i++) {
          f = order[i]; if (!(f in cs) || !(n[f] > 0) || !(te[f] > 0)) continue
          d = cs[f] / C - te[f] * n[f] / T; tvd += d < 0 ? -d : d
          printf "    %-6s %9.1f %9.1f %8.1f %10.1f\n", f, te[f], cs[f] / n[f], 100 * (cs[f] / n[f] - te[f]) / te[f],
                 100 * ((cs[f] / C) / (te[f] * n[f] / T) - 1)
          printf "share %s %.1f %.1f\n", f, te[f], 100 * ((cs[f] / C) / (te[f] * n[f] / T) - 1) > "/dev/stderr"
        }
        printf "    TVD of the per-function shares from the truth: %.3f\n", tvd / 2
        printf "tvd %.3f\n", tvd / 2 > "/dev/stderr"
        if (plain > 0) {
          printf "    program CPU per root call: %.0f ns sampled, %.0f ns plain (long run): %+.1f %%\n",
                 C / n["root"], plain, 100 * (C / n["root"] - plain) / plain
          printf "total %.1f\n", 100 * (C / n["root"] - plain) / plain > "/dev/stderr"
        }
      }' "$tmp/truths.in" "$tmp/truths.csv" 2> "$tmp/truths.err"
    while read -r what fn te se; do
      [ "$what" != share ] || truth_row "(e) $tag: share of CPU error, $fn" "$te" "$se"
    done < "$tmp/truths.err"
    row "(e) $tag: TVD of per-function shares from the truth" "$(awk '$1 == "tvd" { print $2 }' "$tmp/truths.err")" "<= 0.10" \
      "$(ok "$(awk '$1 == "tvd" { print $2 }' "$tmp/truths.err") <= 0.10")"
    row "(e) $tag: program CPU per root call vs plain" "$(awk '$1 == "total" { print $2 }' "$tmp/truths.err") %" "-" "-"
  else
    row "(e) $tag" "no sampled dump" "-" "MISSED"
  fi
  cleandumps
  done

  # (f) a real program: the capprof tool itself running 'tree' on a dump of
  # FW + FW^2 nodes; plain, instrumented, under uftrace (-pg) and gprof
  # (-pg); CPU time of the whole process tree, best of ROUNDS, interleaved.
  if [ -x "$w/capprof_cap" ]; then
    "$w/wl_cap" wide $FW 1 >/dev/null
    mv "$(ls "$tmp"/wl_cap.*.capprof | head -1)" "$tmp/in.cpd"
    frun() {   # frun TAG CMD...: keep the minimum CPU time under TAG
      local tag=$1; shift
      "$cputime" "$tmp/cpu.txt" "$@" >/dev/null
      wall_min[$cc.$tag]=$(fmin "${wall_min[$cc.$tag]:-}" "$(kv "$(cat "$tmp/cpu.txt")" cpu_ns)")
    }
    for ((i = 0; i < ROUNDS; i++)); do
      frun fplain "$w/capprof_plain" tree "$tmp/in.cpd"
      frun fcap "$w/capprof_cap" tree "$tmp/in.cpd"
      mv "$(ls "$tmp"/capprof_cap.*.capprof | head -1)" "$tmp/f.cpd"
      if command -v uftrace >/dev/null; then
        frun fuft uftrace record --no-libcall -d "$tmp/uftrace.data" "$w/capprof_pg" tree "$tmp/in.cpd"
        rm -rf "$tmp/uftrace.data"
        if [ -x "$w/capprof_cyg" ]; then
          frun fcyg uftrace record --no-libcall -d "$tmp/uftrace.data" "$w/capprof_cyg" tree "$tmp/in.cpd"
          rm -rf "$tmp/uftrace.data"
        fi
      fi
      frun fgprof env -C "$tmp" "$w/capprof_pg" tree "$tmp/in.cpd"
      rm -f "$tmp/gmon.out"
    done
    # A ratio to capprof's own cost, which on a noisy machine can come out
    # at or below 0 (the plain run's minimum was the slower): no ratio then.
    fratio() { if [ "$2" -gt 0 ]; then echo "$(calc "$1/$2") x capprof's"; else echo "capprof's cost within the noise"; fi; }
    fok() { if [ "$2" -gt 0 ]; then ok "$1/$2 >= 2.5"; else echo "noise"; fi; }
    fcalls=$(kv "$("$w/bench_dumpstat" "$tmp/f.cpd")" calls)
    fp=${wall_min[$cc.fplain]}
    fo=$(( ${wall_min[$cc.fcap]} - fp ))
    row "(f) capprof tree, $((FW + FW * FW))-node dump: capprof ($fcalls calls)" "$(sgn "100*$fo/$fp" 1) % CPU ($(calc "$fo/$fcalls" 1) ns/call)" "-" "-"
    if [ -n "${wall_min[$cc.fuft]:-}" ]; then
      fu=$(( ${wall_min[$cc.fuft]} - fp ))
      row "(f) same under uftrace record --no-libcall (-pg)" "$(sgn "100*$fu/$fp" 1) % CPU = $(fratio "$fu" "$fo")" ">= 2.5x capprof" "$(fok "$fu" "$fo")"
      if [ -n "${wall_min[$cc.fcyg]:-}" ]; then
        fy=$(( ${wall_min[$cc.fcyg]} - fp ))
        row "(f) uftrace on the $flag build (same calls)" "$(sgn "100*$fy/$fp" 1) % CPU = $(fratio "$fy" "$fo")" ">= 2.5x capprof" "$(fok "$fy" "$fo")"
      fi
    fi
    fg=$(( ${wall_min[$cc.fgprof]} - fp ))
    row "(f) same with gprof (-pg)" "$(sgn "100*$fg/$fp" 1) % CPU = $(fratio "$fg" "$fo")" "-" "-"
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
# The HTML page of the same dump (export --format=html): its size per node,
# and how long headless Chromium takes to make it interactive (html_load.py:
# navigation until the flame graph is drawn and the handlers are wired).
if "$tool" export --help 2>/dev/null | grep -q ' html '; then
  tbest=""
  for ((i = 0; i < 3; i++)); do
    t0=$(now_ns); "$tool" export --format=html -o "$tmp/big.html" "$tmp/big.cpd" 2>/dev/null; t1=$(now_ns)
    tbest=$(fmin "$tbest" $((t1 - t0)))
  done
  hbytes=$(stat -c %s "$tmp/big.html")
  row "capprof export --format=html, $nodes-node dump (wall)" "$(calc "$tbest/1e9" 2) s" "-" "-"
  row "html page bytes per node ($(calc "$hbytes/1e6" 1) MB)" "$(calc "$hbytes/$nodes" 1) B" "<= 60 B" "$(ok "$hbytes/$nodes <= 60")"
  if command -v chromium >/dev/null && command -v python3 >/dev/null; then
    hl=$(python3 "$here/html_load.py" "$tmp/big.html" 2>&1 | tail -1)
    hs=$(sed -n 's/.*interactive after \([0-9.]*\) s.*/\1/p' <<<"$hl")
    if [ -n "$hs" ]; then
      row "html page interactive in headless Chromium (best of 3)" "$hs s" "<= 3 s" "$(ok "$hs <= 3")"
    else
      row "html page interactive in headless Chromium" "failed: $hl" "<= 3 s" "n/a"
    fi
  else
    row "html page interactive in headless Chromium" "(no chromium here)" "<= 3 s" "n/a"
  fi
  rm -f "$tmp/big.html"
fi
t0=$(now_ns); "$w/bench_dumpstat" "$tmp/big.cpd" >/dev/null; t1=$(now_ns)
row "cpd_load of the $nodes-node dump (reader only)" "$(calc "($t1-$t0)/1e9" 2) s" "-" "-"

echo
echo "== results: overhead per call (entry+exit), floor = 2 back-to-back rdtsc = $(calc $floor_all 2) ns =="
printf '%-58s %-22s %-16s %s\n' figure measured target status
for r in "${table[@]}"; do echo "$r"; done
