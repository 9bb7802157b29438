#!/usr/bin/env bash
# bench/fidelity.sh -- the fidelity benchmark of docs/performance.md: real
# programs (Lua 5.4 and sqlite3, from Debian source packages) built without
# hooks and sampled by perf, and built with capprof's hooks; prints per
# program and compiler mode the total-variation distance (TVD) between the
# per-function exclusive-time shares of the two, beside two perf runs against
# each other (the noise floor), whether capprof's top five functions are
# perf's (and in its order), and the top functions of each side.
#
#   bench/fidelity.sh                  everything: lua and sqlite, clang and gcc
#   bench/fidelity.sh --programs lua   one program (lua, sqlite)
#   bench/fidelity.sh --compilers clang     (lists: comma- or space-separated)
#   bench/fidelity.sh --scale N        workload size (default 5: ~20,000 samples)
#   bench/fidelity.sh --reps N         capprof runs per mode; the median TVD is shown (default 3;
#                                      0: perf's figures only)
#   Each program and compiler is run in capprof's default mode (LABEL: sampled
#   through a ring buffer the hooks read, unhooking on; compared by sampled CPU
#   self time, or by the hooks' times where the kernel refused the sampling), and
#   with the options below.
#   bench/fidelity.sh --compensated off  no runs with CAPPROF_SAMPLE=off (LABEL-compensated:
#                                      every hook timed, the hooks' compensated times)
#   bench/fidelity.sh --sample SPEC    also N runs with CAPPROF_SAMPLE=SPEC (default time:250us,
#                                      LABEL-sampled: a signal per sample), compared by their
#                                      sampled CPU self time; 'off': none
#   bench/fidelity.sh --hooked-perf off  skip perf on the hooked build (by default two runs each,
#                                      as sampled, with unhooking, and LABEL-allhooks with
#                                      every hook in place, as the compensated runs: how far
#                                      the hooks change the program itself, their own samples
#                                      left out; the floor for any measurement made inside
#                                      that hooked program, compensation included)
#   bench/fidelity.sh --near off       compare each capprof run with the plain build's first
#                                      perf run (by default with a perf run of the plain build
#                                      recorded right before it: the plain program's own
#                                      profile drifts with the host's load, the line says by
#                                      how much from the first perf run: "drift")
#   bench/fidelity.sh --noperf LIST    also the default mode where perf_event_open is refused
#                                      (LABEL-noperf-WHY, the CPU-time timer's fallback): LIST
#                                      of eperm, eacces (capprof's side under a seccomp filter
#                                      failing perf_event_open so, bench/fidelity/noperf.c) and
#                                      env (CAPPROF_SAMPLE_NO_PERF=1), comma-separated
#   bench/fidelity.sh --views          also, for each capprof run, each view's top five
#                                      functions beside perf's and its TVD from perf: report's
#                                      cpu self, the folded, callgrind (first event), pprof
#                                      (go tool pprof -top, if go is present) and JSON
#                                      (weight_self) exports
#   bench/fidelity.sh --build DIR      capprof build tree (default: build/, built if needed)
#   bench/fidelity.sh --data DIR       sources and builds (default /work/fidelity-data)
#
# Needs network once (apt-get source; as root it adds a bookworm deb-src
# entry), linux-perf, tclsh (sqlite's amalgamation), gcc, clang, python3.
# Not part of CI: it downloads source packages and takes ~15 min (~8 with --near off).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
data=/work/fidelity-data
build=$root/build
programs="lua sqlite"
compilers="clang gcc"
scale=5
reps=3
sample=time:250us
compensated=on
hooked_perf=on
near_ref=on
noperf=""
views=off
wrap=()                              # what runs capprof's side (measure)
while [ $# -gt 0 ]; do
  case "$1" in
    --programs) programs=$(tr , " " <<<"$2"); shift ;;
    --compilers) compilers=$(tr , " " <<<"$2"); shift ;;
    --scale) scale=$2; shift ;;
    --reps) reps=$2; shift ;;
    --sample) sample=$2; shift ;;
    --compensated) compensated=$2; shift ;;
    --hooked-perf) hooked_perf=$2; shift ;;
    --near) near_ref=$2; shift ;;
    --noperf) noperf=$(tr , ' ' <<<"$2"); shift ;;
    --views) views=on ;;
    --build) build=$(cd "$2" && pwd); shift ;;
    --data) data=$2; shift ;;
    -h|--help) sed -n '2,43p' "$0"; exit 0 ;;
    *) echo "fidelity.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
for t in perf python3 dpkg-source; do
  command -v $t >/dev/null || { echo "fidelity.sh: $t not found (Debian: linux-perf, python3, dpkg-dev)" >&2; exit 1; }
done
mkdir -p "$data/src"
data=$(cd "$data" && pwd)
# capprof measures elapsed time, so a run that other processes preempt
# charges their time to whatever function was running: measured runs get a
# higher priority when allowed (nice -10). Not a real-time class: Linux
# stops SCHED_FIFO tasks for 50 ms of every second (sched_rt_runtime_us),
# stalls that perf's CPU-time samples never see and capprof's clock does.
run_nice() {
  if nice -n -10 true 2>/dev/null; then nice -n -10 "$@"
  else "$@"; fi
}

# ---- capprof ------------------------------------------------------------------
if [ ! -x "$build/capprof" ] || [ ! -f "$build/libcapprof.a" ]; then
  cmake -S "$root" -B "$build" >/dev/null
  nice cmake --build "$build" -j2 >/dev/null
fi
capprof=$build/capprof

# Hook flags per compiler: what 'capprof cflags' recommends when the tool has
# that command, else the documented defaults.
hook_flags() {
  local f
  if f=$("$capprof" cflags "$1" 2>/dev/null) && [ -n "$f" ]; then echo "$f"; return; fi
  case "$1" in
    clang) echo "-finstrument-functions-after-inlining" ;;
    *) echo "-finstrument-functions" ;;
  esac
}

# ---- sources ------------------------------------------------------------------
fetch_sources() {
  cd "$data/src"
  if ! ls -d lua5.4-*/ >/dev/null 2>&1 || ! ls -d sqlite3-*/ >/dev/null 2>&1; then
    if ! apt-get source --download-only lua5.4 sqlite3 >/dev/null 2>&1; then
      local list=/etc/apt/sources.list.d/capprof-fidelity-src.sources
      [ "$(id -u)" = 0 ] || { echo "fidelity.sh: add a deb-src entry for bookworm and rerun" >&2; exit 1; }
      printf '%s\n' 'Types: deb-src' 'URIs: http://deb.debian.org/debian' 'Suites: bookworm' \
        'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' >"$list"
      apt-get update -qq >/dev/null
      apt-get source --download-only lua5.4 sqlite3 >/dev/null 2>&1
    fi
    for dsc in lua5.4_*.dsc sqlite3_*.dsc; do dpkg-source -x --no-check "$dsc" >/dev/null; done
  fi
  luasrc=$(ls -d "$data"/src/lua5.4-*/src | head -1)
  # Debian's patched luaconf.h includes a generated multiarch header.
  [ -f "$luasrc/lua5.4-deb-multiarch.h" ] ||
    echo '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"' >"$luasrc/lua5.4-deb-multiarch.h"
  local sq
  sq=$(ls -d "$data"/src/sqlite3-*/ | head -1)
  amal=$data/sqlite-amal
  if [ ! -f "$amal/sqlite3.c" ] || [ ! -f "$amal/shell.c" ]; then
    command -v tclsh >/dev/null || { echo "fidelity.sh: tclsh not found (Debian: tcl)" >&2; exit 1; }
    mkdir -p "$amal"
    (cd "$amal" && "$sq/configure" --disable-tcl >/dev/null && nice make sqlite3.c shell.c >/dev/null)
  fi
  cd "$root"
}

# ---- builds -------------------------------------------------------------------
COMMON="-O2 -g -fno-optimize-sibling-calls"

# build PROGRAM COMPILER VARIANT OUT: VARIANT plain (no hooks) or cap. The
# objects are compiled once per flags; the link is redone, so that a changed
# libcapprof.a is always the one measured.
build_one() {
  local prog=$1 cc=$2 variant=$3 out=$4 flags="" libs="" srcs defs
  if [ "$variant" = cap ]; then
    flags=$(hook_flags "$cc")
    # the static runtime as 'capprof ldflags --static' links it, where the
    # tool has that command (GCC's fentry hooks need its linker flag)
    libs=$("$capprof" ldflags --static 2>/dev/null) || libs="$build/libcapprof.a -lpthread"
  fi
  case $prog in
    # Lua seeds its string hashes with the time and addresses (ASLR), so
    # that each run of the same script has other hash chains: its shares
    # moved by up to 9 points between runs (luaH_getshortstr 11% or 20%),
    # far more than perf's noise. A fixed seed makes every run the same.
    lua) srcs=$(ls "$luasrc"/*.c | grep -v '/luac\.c$'); libs="$libs -lm -ldl"
         defs="-DLUA_USE_LINUX -Dluai_makeseed(L)=0x5eedu" ;;
    sqlite) srcs="$amal/sqlite3.c $amal/shell.c"; libs="$libs -lm"
            defs="-DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -I$amal" ;;
  esac
  local obj=$data/obj/$prog-$cc-$variant stamp="$cc $COMMON $flags $defs"
  if [ "$(cat "$obj/flags" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$obj" && mkdir -p "$obj"
    local s
    for s in $srcs; do
      # shellcheck disable=SC2086
      (cd "$(dirname "$s")" && nice $cc $COMMON $flags $defs -c "$s" -o "$obj/$(basename "$s" .c).o")
    done
    echo "$stamp" >"$obj/flags"
  fi
  # shellcheck disable=SC2086
  $cc -o "$out" "$obj"/*.o $libs
}

# ---- workloads ----------------------------------------------------------------
workload_cmd() {                     # the arguments of PROGRAM's workload
  case $1 in
    lua) echo "$here/fidelity/workload.lua $scale" ;;
    sqlite) echo "-batch :memory:" ;;
  esac
}
workload_in() {                      # its standard input
  case $1 in
    lua) echo /dev/null ;;
    sqlite) echo "$sqlfile" ;;
  esac
}

make_sql() {                         # workload.sql, with SCALE times the rows
  sqlfile=$work/workload.sql
  {
    echo "PRAGMA cache_size=-200000;"
    echo ".parameter init"
    echo ".parameter set @n $((scale * 100000))"
    cat "$here/fidelity/workload.sql"
    # statements one at a time, so that the parser and planner run too
    awk -v n=$((scale * 8000)) 'BEGIN { print "BEGIN;";
      for (i = 1; i <= n; i++)
        printf "INSERT INTO note(cust, body) VALUES (%d, %cnote %d about order %d%c);\n", i % 997, 39, i, i * 7, 39;
      print "COMMIT;"; print "SELECT count(*), sum(length(body)) FROM note;" }'
  } >"$sqlfile"
}

# perf_plain NAME ARGS...: perf on the plain build, its samples with their
# call chains in $work/NAME.txt. Uses plain, input, work of the loop below.
perf_plain() {
  local name=$1
  shift
  run_nice perf record -q -e cpu-clock -F 10000 --call-graph dwarf,16384 -m 4096 \
    -o "$work/$name" "$plain" "$@" <"$input" >/dev/null 2>"$work/$name.err"
  perf script -i "$work/$name" -F ip,sym,dso --no-inline >"$work/$name.txt" 2>/dev/null
  rm -f "$work/$name" "$work/$name.old"
}

# export_views DUMP DIR: the run as each view shows it (--views), for compare.py.
export_views() {
  mkdir -p "$2"
  "$capprof" report -q -F cpu-self --width=0 -n 1000000 "$1" >"$2/report.txt"
  "$capprof" export --format=folded -o "$2/folded.txt" "$1"
  "$capprof" export --format=callgrind -o "$2/callgrind.out" "$1"
  rm -f "$2/pprof.txt"
  if command -v go >/dev/null; then
    "$capprof" export --format=pprof -o "$2/profile.pb.gz" "$1"
    go tool pprof -top -nodefraction=0 -sample_index=cpu "$2/profile.pb.gz" >"$2/pprof.txt" 2>/dev/null || true
  fi
}

# measure LABEL SAMPLE ARGS...: REPS runs of the hooked build with
# CAPPROF_SAMPLE=SAMPLE (empty: unset, the default mode; off: compensated),
# each compared with perf; prints the run with the median TVD and adds a
# summary line. Uses plain, cap, input, t0, t1, work of the loop below.
measure() {
  local label=$1 spec=$2 tag=$1$tsuffix opt=--samples-if-any r
  shift 2
  if [ "$spec" = off ]; then
    tag="$label-compensated$tsuffix"; opt=""
    echo "== $tag: CAPPROF_SAMPLE=off; capprof's side is each function's compensated hook time"
  elif [ -n "$spec" ]; then
    tag="$label-sampled$tsuffix"; opt=--samples
    echo "== $tag: CAPPROF_SAMPLE=$spec; capprof's side is each function's sampled CPU self time"
  else
    echo "== $tag: the default mode (CAPPROF_SAMPLE unset${wrap[*]:+; run by ${wrap[*]}}); capprof's side is what report sorts by"
  fi
  results=()
  durs=()
  for r in $(seq 1 "$reps"); do
    rm -f "$work/$tag.capprof"
    # The reference: perf on the plain build right before this run (the
    # plain program's own profile drifts with the host's load), unless
    # --near off; perf1 and perf2 stay the noise floor.
    local near=()
    if [ "$near_ref" = on ]; then
      perf_plain "$tag.near$r" "$@"
      near=(--near "$work/$tag.near$r.txt")
    fi
    t2=$(date +%s.%N)
    if [ -n "$spec" ]; then
      CAPPROF_SAMPLE=$spec CAPPROF_OUTPUT=$work/$tag.capprof run_nice "${wrap[@]}" "$cap" "$@" <"$input" >/dev/null
    else
      CAPPROF_OUTPUT=$work/$tag.capprof run_nice "${wrap[@]}" "$cap" "$@" <"$input" >/dev/null
    fi
    t3=$(date +%s.%N)
    durs+=("$(awk -v a="$t2" -v b="$t3" 'BEGIN { print b - a }')")
    "$capprof" export --format=json -o "$work/$tag.$r.json" "$work/$tag.capprof"
    local vw=()
    [ "$views" = off ] || { export_views "$work/$tag.capprof" "$work/$tag.$r.views"; vw=(--views "$work/$tag.$r.views"); }
    [ ${#wrap[@]} -eq 0 ] || "$capprof" info "$work/$tag.capprof" | sed -n '/^sampling:/,/^sampled:/p' | head -n 4
    # shellcheck disable=SC2086
    results+=("$(python3 "$here/fidelity/compare.py" --json "$work/$tag.$r.json" \
      --perf "$work/$label.perf1.txt" --perf "$work/$label.perf2.txt" \
      --module "$(basename "$cap")" --label "$tag" $opt "${near[@]}" "${vw[@]}")")
  done
  # Runs differ by more than perf's noise (ASLR moves functions, and with
  # them which call paths share a lookup-table slot): the repetition with
  # the median TVD is shown, and every repetition's TVD beside it.
  all=$(for i in "${!results[@]}"; do
          sed -n 's/.*TVD capprof-vs-perf \([0-9.]*\).*/\1/p' <<<"${results[$i]}"
        done | tr '\n' ' ')
  best=$(for i in "${!results[@]}"; do
           printf '%s %s\n' "$(sed -n 's/.*TVD capprof-vs-perf \([0-9.]*\).*/\1/p' <<<"${results[$i]}")" "$i"
         done | sort -n | awk '{ a[NR] = $2 } END { print a[int((NR + 1) / 2)] }')
  echo "${results[$best]}"
  slow=$(awk -v a="$t0" -v b="$t1" -v c="${durs[$best]}" 'BEGIN { printf "%.1f", c / (b - a) }')
  echo "$tag: run time with hooks / without: ${slow}x"
  summary+=("$(grep 'TVD capprof-vs-perf' <<<"${results[$best]}")  (runs: $all) slowdown ${slow}x")
  [ "$views" = off ] || summary+=("$(printf '%s\n' "${results[@]}" | awk -v t="$tag" '
    / view .* TVD / { n = $0; sub(/.* view /, "", n); sub(/ +TVD .*/, "", n)
                      v = $0; sub(/.* TVD /, "", v); sub(/ .*/, "", v)
                      if (!(n in runs)) order[++k] = n
                      runs[n] = runs[n] " " v }
    END { printf "%s: each view'"'"'s TVD per run:", t
          for (i = 1; i <= k; i++) printf "%s %s%s", (i > 1 ? ";" : ""), order[i], runs[order[i]]
          print "" }')")
}

# hooked LABEL ARGS...: perf on the hooked build, at a quarter of the rate
# (it runs 3-7 times longer), its samples in capprof's own functions left
# out: the profile of what the hooked program itself does, against perf on
# the plain build. SPEC: CAPPROF_SAMPLE for the run (so with unhooking), or
# off: every hook stays, as in the compensated runs; TAG is added to the
# label. Uses cap, input, work of the loop below.
hooked() {
  local label=$1 spec=$2 tag=$3
  shift 3
  local perf1=$work/$label.perf1.txt near=()
  label=$label$tag
  if [ "$near_ref" = on ]; then               # as in measure
    perf_plain "$label.near" "$@"
    near=(--near "$work/$label.near.txt")
  fi
  nm --defined-only "$build/libcapprof.a" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u \
    >"$work/runtime-syms.txt"
  rm -f "$work/$label.hooked.capprof"
  CAPPROF_SAMPLE=$spec CAPPROF_OUTPUT=$work/$label.hooked.capprof run_nice perf record -q -e cpu-clock -F 2500 \
    --call-graph dwarf,16384 -m 4096 -o "$work/$label.hperf" "$cap" "$@" <"$input" \
    >/dev/null 2>"$work/$label.hperf.err"
  perf script -i "$work/$label.hperf" -F ip,sym,dso --no-inline >"$work/$label.hperf.txt" 2>/dev/null
  rm -f "$work/$label.hperf" "$work/$label.hperf.old"
  "$capprof" export --format=json -o "$work/$label.hooked.json" "$work/$label.hooked.capprof"
  local out
  out=$(python3 "$here/fidelity/compare.py" --json "$work/$label.hooked.json" \
    --perf "$perf1" --hooked "$work/$label.hperf.txt" \
    --runtime-syms "$work/runtime-syms.txt" --module "$(basename "$cap")" --label "$label" \
    "${near[@]}")
  echo "$out"
  summary+=("$(grep 'TVD' <<<"$out")")
}

# ---- run ----------------------------------------------------------------------
fetch_sources
work=$data/run
mkdir -p "$work" "$data/bin"
make_sql
summary=()
tsuffix=""
[ -z "$noperf" ] || cc -O2 -o "$data/bin/noperf" "$here/fidelity/noperf.c"
for prog in $programs; do
  for cc in $compilers; do
    command -v "$cc" >/dev/null || { echo "fidelity.sh: $cc not found, skipped" >&2; continue; }
    label="$prog-$cc"
    plain=$data/bin/$prog-$cc-plain
    cap=$data/bin/$prog-$cc-cap
    build_one "$prog" "$cc" plain "$plain"
    build_one "$prog" "$cc" cap "$cap"
    # shellcheck disable=SC2046
    set -- $(workload_cmd "$prog")
    input=$(workload_in "$prog")
    echo "== $label: hooks: $(hook_flags "$cc"); both builds: $COMMON"
    for k in 1 2; do perf_plain "$label.perf$k" "$@"; done
    t0=$(date +%s.%N)
    run_nice "$plain" "$@" <"$input" >/dev/null
    t1=$(date +%s.%N)
    if [ "$reps" -gt 0 ]; then
      measure "$label" "" "$@"
      [ "$compensated" = off ] || measure "$label" off "$@"
      [ "$sample" = off ] || measure "$label" "$sample" "$@"
      for why in $noperf; do
        case $why in
          eperm) wrap=("$data/bin/noperf" EPERM) ;;
          eacces) wrap=("$data/bin/noperf" EACCES) ;;
          env) wrap=(env CAPPROF_SAMPLE_NO_PERF=1) ;;
          *) echo "fidelity.sh: --noperf $why: eperm, eacces or env" >&2; exit 2 ;;
        esac
        tsuffix=-noperf-$why
        measure "$label" "" "$@"
      done
      wrap=()
      tsuffix=""
    fi
    if [ "$hooked_perf" != off ]; then
      [ "$sample" = off ] || hooked "$label" "$sample" "" "$@"
      hooked "$label" off -allhooks "$@"
    fi
  done
done
echo
echo "== summary (TVD: 0 = same per-function exclusive shares, 1 = disjoint; target <= 0.12)"
printf '%s\n' "${summary[@]}"
# The target, per program and mode: the median run's distance at most 0.12.
echo
echo "== target: TVD <= 0.12 (median of the runs)"
for line in "${summary[@]}"; do
  tvd=$(sed -n 's/^\([^:]*\): TVD capprof-vs-perf \([0-9.]*\).*/\1 \2/p' <<<"$line")
  [ -n "$tvd" ] || continue
  awk -v l="${tvd% *}" -v t="${tvd#* }" \
    'BEGIN { m = l ~ /-sampled$/ ? "sampled (signal)" : l ~ /-compensated$/ ? "compensated hook times" : "default"
             printf "%-24s %-24s %s  %s\n", l, m, t, (t <= 0.12) ? "met" : "MISSED" }'
done
