#!/bin/sh
# run.sh BUILD SRC CASE -- end-to-end tests of 'capprof run' (docs/run.md):
# programs built with no capprof flag (and some with hooks) are run under
# the launcher; their dumps are checked with exact counts by e2e_check
# (tests/e2e/check.c names intercepted calls by their symbol).
set -eu
build=$1 src=$2 case=$3
here=$src/tests/run
work=$build/tests/run-work/$case
rm -rf "$work"
mkdir -p "$work"
cd "$work"
capprof=$build/capprof
check=$build/tests/e2e_check
cc=${CC:-cc}
out="$work/%n.%p.capprof"

fail() { echo "FAIL: $*"; exit 1; }
dumps() { ls "$work"/*.capprof 2>/dev/null | wc -l; }
one_dump() { [ "$(dumps)" -eq 1 ] || fail "expected 1 dump, got $(dumps)"; ls "$work"/*.capprof; }
expect() {   # expect FILE: check the only dump against FILE
  d=$(one_dump)
  "$check" "$d" /dev/null "$1" || fail "expectations of $1"
}

case $case in
apicalls|apicalls_now|apicalls_noplt)
  # Uninstrumented: every intercepted call directly under each thread's root.
  # Lazy binding (JUMP_SLOT), immediate binding, and -fno-plt (GLOB_DAT).
  flags=
  [ $case = apicalls_noplt ] && flags=-fno-plt
  $cc -O1 -g -fno-builtin $flags -o prog "$here/apicalls.c" -lm -lpthread
  [ $case = apicalls_now ] && export LD_BIND_NOW=1     # immediate binding
  RUN_EXPECT=exp.txt "$capprof" run -q -o "$out" -- ./prog > stdout.txt
  grep -q '^total' stdout.txt || fail "program output lost"
  expect exp.txt
  "$capprof" report --api "$work"/prog.*.capprof > report.txt
  grep -q 'libc.so.6: ' report.txt || fail "report --api lists no libc.so.6"
  grep -Eq '^ +60 .* getpid$' report.txt || fail "report --api: getpid not 60 calls"
  grep -Eq '^ +110 .* sin$' report.txt || fail "report --api: sin not 110 calls"
  ;;
hooks|hooks_static)
  # Built with hooks: API calls under the calling functions, and the qsort
  # comparator's calls under qsort. Static: the launcher must not add a
  # second runtime; its settings reach the one linked in.
  if [ $case = hooks ]; then
    lib="-L$build -lcapprof -Wl,-rpath,$build"
  else
    lib="$build/libcapprof.a -ldl"
  fi
  # shellcheck disable=SC2086
  $cc -O1 -g -fno-builtin -finstrument-functions -o prog "$here/apicalls.c" $lib -lm -lpthread
  RUN_HOOKS=1 RUN_MAP=map.txt RUN_EXPECT=exp.txt "$capprof" run -q -o "$out" -- ./prog >/dev/null
  d=$(one_dump)
  "$check" "$d" map.txt exp.txt || fail "expectations"
  ;;
tree)
  # One dump per process: a program that forks, and a shell script that
  # runs two programs; 'info' tells which process each dump was.
  $cc -O1 -o forker "$here/forker.c"
  $cc -O1 -o small "$here/small.c"
  status=0
  "$capprof" run -q -o "$out" -- ./forker || status=$?
  [ $status -eq 5 ] || fail "forker: status $status, expected 5"
  [ "$(dumps)" -eq 2 ] || fail "forker: $(dumps) dumps, expected 2"
  for d in "$work"/forker.*.capprof; do
    pid=${d%.capprof}; pid=${pid##*.}
    n=$("$capprof" report --api "$d" | awk '$NF == "getpid" { print $1 }')
    "$capprof" info "$d" > info.txt
    if grep -q "process:     pid $pid, parent [0-9]" info.txt; then :; else
      cat info.txt; fail "info does not name process $pid"; fi
    case $n in 2|3) ;; *) fail "$d: getpid $n times";; esac
    echo "$n" >> counts.txt
  done
  [ "$(sort counts.txt | tr '\n' ' ')" = "2 3 " ] || fail "getpid counts $(cat counts.txt)"
  "$capprof" merge -o merged.out "$work"/forker.*.capprof
  "$capprof" report --api merged.out | grep -Eq '^ +5 .* getpid$' ||
    fail "merged dump: report --api does not count 2 + 3 getpid calls"
  rm -f "$work"/*.capprof
  printf './small 3\n./small 4 0\nexit 0\n' > script.sh
  "$capprof" run -o "$out" -- sh script.sh 2> stderr.txt
  [ "$(dumps)" -eq 3 ] || { cat stderr.txt; fail "script: $(dumps) dumps, expected 3"; }
  grep -q 'capprof: wrote 3 dumps' stderr.txt || { cat stderr.txt; fail "no line naming 3 dumps"; }
  "$capprof" report --api --sort=name "$work"/small.*.capprof > small.txt
  grep -Eq '^ +7 .* getpid$' small.txt || { cat small.txt; fail "small: getpid not 3 + 4"; }
  ;;
status)
  $cc -O1 -o small "$here/small.c"
  for want in 0 3; do
    status=0
    "$capprof" run -q -o "$out" -- ./small 1 $want || status=$?
    [ $status -eq $want ] || fail "status $status, expected $want"
  done
  status=0
  "$capprof" run -q -o "$out" -- ./small 1 0 15 || status=$?
  [ $status -eq 143 ] || fail "killed by SIGTERM: status $status, expected 143"
  status=0
  "$capprof" run -q -o "$out" -- ./no-such-program 2> err.txt || status=$?
  [ $status -eq 127 ] || fail "missing program: status $status, expected 127"
  grep -q 'capprof: cannot run ./no-such-program' err.txt || fail "no error line"
  ;;
longjmp)
  $cc -O1 -o prog "$here/jump.c"
  "$capprof" run -q -o "$out" -- ./prog > stdout.txt
  grep -q 'sorted 1' stdout.txt || fail "program result changed"
  printf 'path qsort 3\npath getpid 5\nnone qsort;getpid\nconsistent\n' > exp.txt
  expect exp.txt
  ;;
exception)
  ${CXX:-c++} -O1 -o prog "$here/throw.cpp"
  "$capprof" run -q -o "$out" -- ./prog > stdout.txt || fail "status $?"
  grep -q 'caught 2 sorted 1' stdout.txt || fail "program result changed: $(cat stdout.txt)"
  printf 'path qsort 3\npath qsort;getpid 1\npath getpid 4\nnone qsort;qsort\nconsistent\n' > exp.txt
  expect exp.txt
  ;;
exit)
  $cc -O1 -o prog "$here/quit.c"
  status=0
  "$capprof" run -q -o "$out" -- ./prog || status=$?
  [ $status -eq 4 ] || fail "status $status, expected 4"
  printf 'path qsort 1\nopen qsort\npath qsort;exit 1\nopen qsort;exit\npath qsort;exit;getpid 2\n' > exp.txt
  expect exp.txt
  ;;
dlopen)
  $cc -O1 -g -fPIC -shared -fno-builtin -o libloader_lib.so "$here/loader_lib.c" -lm
  $cc -O1 -o prog "$here/loader.c" -ldl
  "$capprof" run -q -o "$out" -- ./prog ./libloader_lib.so > stdout.txt
  printf 'path cos 3\nconsistent\n' > exp.txt
  expect exp.txt
  "$capprof" report --api "$work"/prog.*.capprof | grep -q '^libm.so.6: 3 calls' ||
    fail "report --api: cos not listed under libm.so.6"
  ;;
signal)
  # Handlers (on the thread's stack, then on a signal stack) make intercepted
  # calls while the main loop is inside intercepted calls.
  $cc -O1 -o prog "$here/sig.c"
  "$capprof" run -q -o "$out" -- ./prog > stdout.txt
  read -r _ want_ppid _ want_pid < stdout.txt
  d=$(one_dump)
  "$capprof" report --api "$d" > report.txt
  got_ppid=$(awk '$NF == "getppid" { gsub(",", "", $1); print $1 }' report.txt)
  got_pid=$(awk '$NF == "getpid" { gsub(",", "", $1); print $1 }' report.txt)
  [ "$got_ppid" = "$want_ppid" ] || fail "getppid: $got_ppid calls, the program made $want_ppid"
  [ "$got_pid" = "$want_pid" ] || fail "getpid: $got_pid calls, the handlers made $want_pid"
  printf 'consistent\n' > exp.txt
  expect exp.txt
  ;;
early)
  # A thread started by a library's constructor, before the runtime, runs
  # while the import slots are patched: it goes on, and its later calls are
  # counted exactly.
  $cc -O1 -g -fPIC -shared -o libearly_lib.so "$here/early_lib.c" -lpthread
  $cc -O1 -o prog "$here/early.c" -L. -learly_lib -Wl,-rpath,"$work" -lpthread
  "$capprof" run -q -o "$out" -- ./prog
  d=$(one_dump)
  n=$("$capprof" report --api "$d" | awk '$NF == "getppid" { gsub(",", "", $1); print $1 }')
  [ "$n" = 1000 ] || fail "getppid: $n calls, expected 1000"
  ;;
static)
  $cc -O1 -static -o small "$here/small.c" 2>/dev/null || { echo "no static libc: skipped"; exit 0; }
  status=0
  "$capprof" run -o "$out" -- ./small 2 3 2> err.txt || status=$?
  [ $status -eq 3 ] || fail "status $status"
  grep -q 'statically linked: API interception cannot apply' err.txt || fail "no line: $(cat err.txt)"
  ;;
sqlite)
  # The done-when check: Debian's own sqlite3 binary, uninstrumented.
  command -v sqlite3 >/dev/null || fail "sqlite3 is not installed (.ci/deps installs it)"
  printf 'create table t(x);\ninsert into t values (1), (2), (3);\nselect sum(x) from t;\n' > q.sql
  "$capprof" run -q -o "$out" --api=libsqlite3,libc -- sqlite3 :memory: < q.sql > stdout.txt
  [ "$(cat stdout.txt)" = 6 ] || fail "sqlite3 printed $(cat stdout.txt)"
  "$capprof" report --api "$work"/sqlite3.*.capprof > report.txt
  cat report.txt
  grep -q '^libsqlite3.so.0: ' report.txt || fail "no libsqlite3 calls listed"
  grep -q '^libc.so.6: ' report.txt || fail "no libc calls listed"
  # Each of the 3 statements is prepared once by the shell.
  grep -Eq '^ +3 .* sqlite3_prepare_v2$' report.txt || fail "sqlite3_prepare_v2 not 3 calls"
  ;;
*) fail "unknown case $case" ;;
esac
echo "ok $case"
