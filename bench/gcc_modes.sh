#!/usr/bin/env bash
# bench/gcc_modes.sh -- what each compiler mode costs an STL-heavy C++ program
# (bench/stl.cpp: std::map, std::unordered_map, std::sort, strings): built
# without hooks, with GCC's -finstrument-functions (hooks in every inlined STL
# function), with it and the library headers excluded, in GCC's recommended
# mode ('capprof cflags g++': -pg -mfentry -minstrument-return=call, hooks
# only in functions left after inlining), and with Clang after inlining.
# Prints each variant's process CPU time (user + system, minimum over
# interleaved repetitions) and its ratio to the same compiler's build without
# hooks, measured in this run. Target (issue 10): recommended GCC mode <= 1.5x.
# The default is sampled (a ring buffer the hooks read, 4 kHz of CPU time)
# with unhooking; CAPPROF_SAMPLE=off times every hook (compensated), and the
# CAPPROF_SAMPLE=time:... variants sample through a signal, at two intervals:
# each sample costs the program its interrupt and signal delivery
# (bench/sample.sh measures it).
#
#   bench/gcc_modes.sh [--build DIR] [--against DIR2] [--reps N] [--rounds N]
#     DIR: a configured and built capprof tree (default: build/)
#     DIR2: another built tree (an earlier commit): each hooked variant is
#       linked with its libcapprof.a too, run interleaved with DIR's, and
#       its ratio printed beside DIR's with the difference
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=$root/build reps=5 rounds=10 against=
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift ;;
    --against) against=$(cd "$2" && pwd); shift ;;
    --reps) reps=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "gcc_modes.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
for f in libcapprof.a capprof bench/bench_cputime; do
  [ -e "$build/$f" ] || { echo "gcc_modes.sh: $build/$f missing: build capprof first" >&2; exit 2; }
done
tmp=$(mktemp -d /tmp/capprof-gccmodes.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export CAPPROF_OUTPUT="$tmp/%n.%p.capprof"
lib="$build/libcapprof.a -lpthread -ldl"
inc="-I$root/include"

# name|compiler|flags|environment
variants=(
  "g++ plain|g++||"
  "g++ -finstrument-functions|g++|-finstrument-functions|"
  "g++ -finstrument-functions, headers excluded|g++|-finstrument-functions -finstrument-functions-exclude-file-list=/usr/include/,/include/c++/|"
  "g++ recommended: $("$build/capprof" cflags g++) (default)|g++|$("$build/capprof" cflags g++)|"
  "g++ recommended, CAPPROF_SAMPLE=off (every hook timed)|g++|$("$build/capprof" cflags g++)|CAPPROF_SAMPLE=off"
  "g++ recommended, CAPPROF_SAMPLE=off CAPPROF_CLOCK=tsc-mixed|g++|$("$build/capprof" cflags g++)|CAPPROF_SAMPLE=off CAPPROF_CLOCK=tsc-mixed"
  "g++ recommended, CAPPROF_SAMPLE=off CAPPROF_THROTTLE=off|g++|$("$build/capprof" cflags g++)|CAPPROF_SAMPLE=off CAPPROF_THROTTLE=off"
  "g++ recommended, CAPPROF_SAMPLE=time:250us (unhooking)|g++|$("$build/capprof" cflags g++)|CAPPROF_SAMPLE=time:250us"
  "g++ recommended, CAPPROF_SAMPLE=time:1ms (unhooking)|g++|$("$build/capprof" cflags g++)|CAPPROF_SAMPLE=time:1ms"
)
command -v clang++ >/dev/null && variants+=(
  "clang++ plain|clang++||"
  "clang++ recommended: $("$build/capprof" cflags clang++) (default)|clang++|$("$build/capprof" cflags clang++)|"
  "clang++ recommended, CAPPROF_SAMPLE=off|clang++|$("$build/capprof" cflags clang++)|CAPPROF_SAMPLE=off"
  "clang++ recommended, CAPPROF_SAMPLE=time:250us (unhooking)|clang++|$("$build/capprof" cflags clang++)|CAPPROF_SAMPLE=time:250us"
)
n=${#variants[@]}
for ((i = 0; i < n; i++)); do
  IFS='|' read -r name cxx flags env <<<"${variants[$i]}"
  link=$lib
  [ -n "$flags" ] || link=
  # shellcheck disable=SC2086
  $cxx -std=c++17 -O2 -g $inc $flags -o "$tmp/v$i" "$here/stl.cpp" $link
  if [ -n "$against" ] && [ -n "$flags" ]; then
    # shellcheck disable=SC2086
    $cxx -std=c++17 -O2 -g $inc $flags -o "$tmp/a$i" "$here/stl.cpp" "$against/libcapprof.a" -lpthread -ldl
  fi
done

declare -A best calls bestA
for ((r = 0; r < reps; r++)); do
  for ((i = 0; i < n; i++)); do
    IFS='|' read -r name cxx flags env <<<"${variants[$i]}"
    # The other build's run first in even repetitions, second in odd ones.
    if [ -x "$tmp/a$i" ] && [ $((r % 2)) = 0 ]; then
      rm -f "$tmp"/*.capprof
      # shellcheck disable=SC2086
      env $env "$build/bench/bench_cputime" "$tmp/t" "$tmp/a$i" "$rounds" > /dev/null
      ns=$(sed -n 's/.*cpu_ns=\([0-9]*\).*/\1/p' "$tmp/t")
      if [ -z "${bestA[$i]:-}" ] || [ "$ns" -lt "${bestA[$i]}" ]; then bestA[$i]=$ns; fi
    fi
    rm -f "$tmp"/*.capprof
    # shellcheck disable=SC2086
    env $env "$build/bench/bench_cputime" "$tmp/t" "$tmp/v$i" "$rounds" > /dev/null
    ns=$(sed -n 's/.*cpu_ns=\([0-9]*\).*/\1/p' "$tmp/t")
    if [ -z "${best[$i]:-}" ] || [ "$ns" -lt "${best[$i]}" ]; then best[$i]=$ns; fi
    if [ -x "$tmp/a$i" ] && [ $((r % 2)) = 1 ]; then
      rm -f "$tmp"/*.capprof
      # shellcheck disable=SC2086
      env $env "$build/bench/bench_cputime" "$tmp/t" "$tmp/a$i" "$rounds" > /dev/null
      ns=$(sed -n 's/.*cpu_ns=\([0-9]*\).*/\1/p' "$tmp/t")
      if [ -z "${bestA[$i]:-}" ] || [ "$ns" -lt "${bestA[$i]}" ]; then bestA[$i]=$ns; fi
    fi
    d=$(ls "$tmp"/*.capprof 2>/dev/null | head -n 1 || true)
    if [ -n "$d" ] && [ -z "${calls[$i]:-}" ]; then
      calls[$i]=$("$build/capprof" report --limit 0 "$d" 2>/dev/null | sed -n '1s/.*thread[s]*, \([0-9,]*\) calls.*/\1/p')
    fi
  done
done

echo "bench/gcc_modes.sh: bench/stl.cpp, $rounds rounds, minimum process CPU time over $reps interleaved runs, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cpus"
printf '%-78s %9s %7s %14s\n' "variant" "cpu s" "ratio" "calls recorded"
base=
for ((i = 0; i < n; i++)); do
  IFS='|' read -r name cxx flags env <<<"${variants[$i]}"
  [ -n "$flags" ] && [ -n "$env" ] || true
  if [ -z "$flags" ]; then base=${best[$i]}; fi
  ratio=$(awk -v a="${best[$i]}" -v b="$base" 'BEGIN{printf "%.2fx", a/b}')
  printf '%-78s %9.3f %7s %14s\n' "$name" "$(awk -v a="${best[$i]}" 'BEGIN{print a/1e9}')" "$ratio" "${calls[$i]:--}"
  if [ -n "${bestA[$i]:-}" ]; then
    printf '%-78s %9.3f %7s %14s\n' "  same, linked with $against" "$(awk -v a="${bestA[$i]}" 'BEGIN{print a/1e9}')" \
      "$(awk -v a="${bestA[$i]}" -v b="$base" 'BEGIN{printf "%.2fx", a/b}')" \
      "$(awk -v a="${best[$i]}" -v c="${bestA[$i]}" 'BEGIN{printf "this %+.1f %%", (a/c - 1) * 100}')"
  fi
  case $name in
    "g++ recommended: "*) gcc_ratio=$(awk -v a="${best[$i]}" -v b="$base" 'BEGIN{printf "%.2f", a/b}') ;;
    "g++ recommended, CAPPROF_SAMPLE=off (every"*) soff=$(awk -v a="${best[$i]}" -v b="$base" 'BEGIN{printf "%.2f", a/b}') ;;
    "g++ recommended, CAPPROF_SAMPLE=time:250us"*) s250=$(awk -v a="${best[$i]}" -v b="$base" 'BEGIN{printf "%.2f", a/b}') ;;
    "g++ recommended, CAPPROF_SAMPLE=time:1ms"*) s1ms=$(awk -v a="${best[$i]}" -v b="$base" 'BEGIN{printf "%.2f", a/b}') ;;
  esac
done
verdict() { awk -v r="$1" 'BEGIN{print (r <= 1.5) ? "met" : "MISSED"}'; }
echo "target: GCC recommended mode at most 1.5x its plain build: ${gcc_ratio}x, $(verdict "$gcc_ratio")"
echo "        with CAPPROF_SAMPLE=off (every hook timed): ${soff}x, $(verdict "$soff")"
echo "        sampled through a signal (unhooking, every call counted): ${s250}x at 250 us, $(verdict "$s250"); ${s1ms}x at 1 ms, $(verdict "$s1ms")"
echo "        (what a sample costs the program, kernel and hypervisor included: bench/sample.sh)"
