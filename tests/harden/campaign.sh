#!/bin/sh
# campaign.sh BUILD SRC [--runs N] [--full] -- issue 33's hostile-program
# campaign, rerunnable: each program of tests/harden/ built six ways (GCC's
# recommended hooks with the static and the shared runtime, GCC and Clang
# -finstrument-functions, Clang after inlining, and plain), each run N times
# (CI: 1; --full: 20, the bench size) and compared with its plain build.
# Prints one row per case: runs, crashes (a signal, or an exit status other
# than the plain build's), hangs (no end within 60 s), changed output
# (stdout differs from the plain build's), dumps lost (an instrumented run
# that wrote none). Exits 1 when any count but runs is not 0.
set -eu
build=$1 src=$2
shift 2
runs=1
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift ;;
    --full) runs=20 ;;
    *) echo "usage: campaign.sh BUILD SRC [--runs N] [--full]" >&2; exit 2 ;;
  esac
  shift
done
here=$src/tests/harden
work=$build/tests/harden-work/campaign
rm -rf "$work"; mkdir -p "$work"; cd "$work"
capprof=$build/capprof
command -v gcc >/dev/null || exit 77
"$capprof" cflags gcc | grep -q mfentry || exit 77           # x86-64 only
fentry=$("$capprof" cflags gcc)
static=$("$capprof" ldflags --static)
shared="-L$build -lcapprof -Wl,-rpath,$build"
cyg="$build/libcapprof.a -lpthread -ldl"

# case: source and the environment its instrumented runs get
cases="protect:protect.c:CAPPROF_UNHOOK=on
mprotect_race:mprotect_race.c:CAPPROF_UNHOOK=on
wx_filter:wx_filter.c:CAPPROF_UNHOOK=on
tsync_filter:tsync_filter.c:CAPPROF_UNHOOK=on
perf_filter:perf_filter.c:CAPPROF_SAMPLE=time:1ms
cancel:cancel.c:CAPPROF_UNHOOK=auto
cancel_cxx:cancel_cxx.cpp:CAPPROF_UNHOOK=auto
quick_exit:quick_exit.c:CAPPROF_UNHOOK=auto
strict:strict.c:CAPPROF_UNHOOK=auto"

# compile WAY SRC OUT: 0, or 1 when this machine lacks the compiler.
compile() {
  way=$1 in=$2 out=$3
  case $in in *.cpp) gcc=g++ clang=clang++ ;; *) gcc=gcc clang=clang ;; esac
  case $way in
    gcc-fentry-static) set -- $gcc $fentry "$in" $static ;;
    gcc-fentry-shared) set -- $gcc $fentry "$in" $shared ;;
    gcc-cyg)           set -- $gcc -finstrument-functions "$in" $cyg ;;
    clang-cyg)         set -- $clang -finstrument-functions "$in" $cyg ;;
    clang-inlined)     set -- $clang -finstrument-functions-after-inlining "$in" $cyg ;;
    plain)             set -- $gcc "$in" ;;
  esac
  command -v "$1" >/dev/null || return 1
  "$@" -O2 -g -fno-optimize-sibling-calls -lpthread -o "$out" 2>> build.log
}

ways="plain gcc-fentry-static gcc-fentry-shared gcc-cyg clang-cyg clang-inlined"
printf '%-14s %6s %8s %6s %15s %11s\n' case runs crashes hangs "changed output" "dumps lost"
bad=0
echo "$cases" | while IFS=: read -r name file env; do
  nruns=0 crashes=0 hangs=0 changed=0 lost=0
  for way in $ways; do
    compile "$way" "$here/$file" "$name.$way" || continue
  done
  [ -x "$name.plain" ] || { echo "campaign: $name: no plain build" >&2; exit 1; }
  ./"$name.plain" > "$name.plain.out" 2> /dev/null && pstatus=0 || pstatus=$?
  for way in $ways; do
    [ "$way" != plain ] && [ -x "$name.$way" ] || continue
    r=0
    while [ $r -lt "$runs" ]; do
      r=$((r + 1)); nruns=$((nruns + 1))
      d=$work/dumps/$name.$way.$r
      mkdir -p "$d"
      status=0
      # shellcheck disable=SC2086
      env $env CAPPROF_OUTPUT="$d/%n.%p.capprof" timeout 60 "./$name.$way" \
        > "$d/out" 2> "$d/err" || status=$?
      if [ $status -eq 124 ]; then hangs=$((hangs + 1)); continue; fi
      if [ $status -ne $pstatus ]; then crashes=$((crashes + 1)); echo "  $name.$way run $r: exit $status" >&2; fi
      cmp -s "$d/out" "$name.plain.out" || { changed=$((changed + 1)); echo "  $name.$way run $r: output changed" >&2; }
      ls "$d"/*.capprof > /dev/null 2>&1 || { lost=$((lost + 1)); echo "  $name.$way run $r: no dump" >&2; }
    done
  done
  printf '%-14s %6d %8d %6d %15d %11d\n' "$name" $nruns $crashes $hangs $changed $lost
  [ $((crashes + hangs + changed + lost)) -eq 0 ] || echo bad >> verdict
done
[ ! -f verdict ] || exit 1
