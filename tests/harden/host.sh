#!/bin/sh
# host.sh BUILD SRC CASE -- issue 33: the default never changes or kills its
# host. Each case builds one hostile program with GCC's recommended hooks
# (static runtime) and checks that it behaves as without capprof; races are
# made deterministic by the runtime's test check points (src/patch/patch.h).
set -eu
build=$1 src=$2 case=$3
here=$src/tests/harden
work=$build/tests/harden-work/host-$case
rm -rf "$work"; mkdir -p "$work"; cd "$work"
capprof=$build/capprof
command -v gcc >/dev/null || exit 77
"$capprof" cflags gcc | grep -q mfentry || exit 77            # x86-64 only
cflags=$("$capprof" cflags gcc)
static=$("$capprof" ldflags --static)

# build NAME SOURCE...: GCC's recommended hooks, static runtime.
build_prog() {
  name=$1; shift
  # shellcheck disable=SC2086
  gcc -O2 -g -fno-optimize-sibling-calls $cflags "$@" $static -o "$name"
}

# run NAME ARGS...: run with a dump in $work, exit status in $status.
run() {
  status=0
  CAPPROF_OUTPUT="$work/$1.capprof" "./$@" > "$1.out" 2> "$1.err" || status=$?
  cat "$1.out"
  [ $status -eq 0 ] || { echo "FAIL: $1 exit status $status"; cat "$1.err"; exit 1; }
}

case $case in
protect)            # case 1: unhooking keeps each page's protection
  build_prog protect "$here/protect.c"
  CAPPROF_UNHOOK=on run protect
  grep -qx 'rwx_leaf page rwxp' protect.out
  grep -qx 'xo_leaf page --xp' protect.out
  "$capprof" report protect.capprof > report.txt
  grep -q 'rwx_leaf .*\[unhooked\]' report.txt      # writable code is patched in place
  if grep -q 'xo_leaf .*\[unhooked\]' report.txt; then
    echo "FAIL: execute-only code patched"; exit 1
  fi
  ;;
mprotect_race)      # case 2: a host's mprotect of the code while it is patched
  build_prog race "$here/mprotect_race.c" -lpthread
  CAPPROF_UNHOOK=on run race
  grep -qx 'raced 1' race.err                        # the check point was reached
  "$capprof" report race.capprof | grep -q 'leaf .*\[unhooked\]'
  ;;
wx_filter)          # case 3: a filter that kills W+X mappings: nothing patched
  build_prog wx "$here/wx_filter.c"
  CAPPROF_UNHOOK=on run wx
  grep -q '^ok ' wx.out
  if "$capprof" report wx.capprof | grep -q '\[unhooked\]'; then
    echo "FAIL: code patched under a seccomp filter"; exit 1
  fi
  ;;
tsync_filter)       # case 4: a TSYNC filter from another thread during a patch
  build_prog tsync "$here/tsync_filter.c" -lpthread
  CAPPROF_UNHOOK=on run tsync
  grep -qx 'raced 1' tsync.err
  ;;
perf_filter)        # case 7: explicit sampling checks the filter for new threads
  build_prog perf "$here/perf_filter.c" -lpthread
  CAPPROF_SAMPLE=time:1ms run perf
  grep -q '^ok ' perf.out
  "$capprof" info perf.capprof > /dev/null
  ;;
cancel)             # case 8: the runtime's system calls are no cancellation points
  build_prog cancel "$here/cancel.c" -lpthread
  timeout 30 sh -c 'CAPPROF_OUTPUT="$1/cancel.capprof" ./cancel > cancel.out' sh "$work" ||
    { echo "FAIL: cancel exit status $? (124: a hang)"; exit 1; }
  cat cancel.out
  grep -qx 'ran 20 of 20' cancel.out
  if command -v g++ >/dev/null; then
    # shellcheck disable=SC2086
    g++ -O2 -g $cflags "$here/cancel_cxx.cpp" $static -o cancel_cxx
    run cancel_cxx
    grep -qx 'ran 1' cancel_cxx.out
  fi
  ;;
quick_exit)         # case 14: quick_exit() writes the dump
  build_prog quick "$here/quick_exit.c"
  status=0
  CAPPROF_OUTPUT="$work/quick.capprof" ./quick > quick.out 2> quick.err || status=$?
  cat quick.out quick.err
  [ $status -eq 3 ] || { echo "FAIL: exit status $status, not 3"; exit 1; }
  grep -qx handler quick.out
  [ "$(ls ./*.capprof)" = ./quick.capprof ] || { echo "FAIL: not one dump:"; ls; exit 1; }
  "$capprof" report quick.capprof | grep -q ' 1,000 .* work '
  ;;
stderr_file)        # case 15: diagnostics only to the descriptor 2 the program began with
  build_prog daemon "$here/stderr_file.c"
  CAPPROF_OUTPUT="$work/missing/dir/d.capprof" ./daemon data.txt > daemon.out 2> daemon.err
  cat daemon.out data.txt daemon.err
  grep -q '^ok ' daemon.out
  [ "$(cat data.txt)" = "record 1" ] || { echo "FAIL: the data file holds more"; exit 1; }
  # its descriptor 2 left alone: the line is there
  CAPPROF_OUTPUT="$work/missing/dir/d.capprof" ./daemon data2.txt keep > keep.out 2> keep.err
  grep -q '^capprof: ' keep.err || { echo "FAIL: no line on the original stderr"; exit 1; }
  ;;
emfile)             # case 16: a dump lost for lack of descriptors says so
  build_prog emfile "$here/emfile.c"
  (ulimit -n 64 && CAPPROF_OUTPUT="$work/e.capprof" ./emfile > emfile.out 2> emfile.err)
  cat emfile.out emfile.err
  grep -q '^ok ' emfile.out
  grep -q '^capprof: .*: too many open files$' emfile.err ||
    { echo "FAIL: the cause is not named"; exit 1; }
  ;;
export_self)        # case 17: export refuses to overwrite its input, as merge does
  build_prog stderr_prog "$here/stderr_file.c"
  CAPPROF_OUTPUT="$work/d.capprof" ./stderr_prog data.txt keep > /dev/null
  cp d.capprof keep.capprof
  for out in d.capprof ./d.capprof "$work/d.capprof"; do
    if "$capprof" export --format=json -o "$out" d.capprof 2> err.txt; then
      echo "FAIL: export -o $out d.capprof succeeded"; exit 1
    fi
    grep -q 'the output would overwrite an input' err.txt
    cmp -s d.capprof keep.capprof || { echo "FAIL: the dump was overwritten ($out)"; exit 1; }
  done
  "$capprof" export --format=json -o out.json d.capprof
  ;;
strict)             # case 5: SECCOMP_MODE_STRICT in a thread: its hooks step aside
  build_prog strict "$here/strict.c" -lpthread
  run strict
  grep -qx 'strict thread done' strict.out
  grep -qx 'ok 1' strict.out
  "$capprof" info strict.capprof > /dev/null
  ;;
*) echo "unknown case $case"; exit 2 ;;
esac
echo PASS
