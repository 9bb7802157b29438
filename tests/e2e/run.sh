#!/bin/sh
# run.sh BUILD SRC CC static|shared|fullstatic NAME [MODE] -- build tests/e2e/NAME.c (or
# .cpp) with CC and its function hooks (and CAPPROF_ENABLED, for zones), link
# it with libcapprof, run it, and check its dump against NAME.expect (or
# NAME.MODE.expect when there is one; NAME.expect.gen when the program wrote
# its own). A file NAME_noinstr.c is compiled without hooks.
# MODE: "fentry" (gcc -pg -mfentry -minstrument-return=call, -pg also at link
# time: no gmon.out may appear), "fentry-nopie" (the same, -no-pie), or
# nothing: the compiler's -finstrument-functions[-after-inlining].
# A source line "e2e: cflags X" adds X to its compile flags (e.g. -O2).
set -eu
build=$1 src=$2 cc=$3 link=$4 name=$5 mode=${6:-}
e2e=$src/tests/e2e
# E2E_TAG names a variant run (another environment; E2E_EXPECT: its file).
work=$build/tests/e2e-work/$name-$(basename "$cc")-$link${mode:+-$mode}${E2E_TAG:+-$E2E_TAG}
rm -rf "$work"
mkdir -p "$work"
cd "$work"

case $(basename "$cc") in
  clang*) hooks=-finstrument-functions-after-inlining cxx=clang++ ;;
  *) hooks=-finstrument-functions cxx=g++ ;;
esac
ldhooks= pie=
case $mode in
  fentry) hooks="-pg -mfentry -minstrument-return=call" ldhooks=-pg ;;
  fentry-nopie) hooks="-pg -mfentry -minstrument-return=call" ldhooks="-pg -no-pie" pie=-fno-pie ;;
esac
# Keys are inside functions in the fentry modes: start + 5 or 6.
[ -n "$mode" ] && export E2E_KEY_SLACK=16
compiler=$cc
srcfile=$e2e/$name.c
if [ -f "$e2e/$name.cpp" ]; then compiler=$cxx srcfile=$e2e/$name.cpp; fi
# A program that says "e2e: no hooks" is built without them (zones only).
if grep -q 'e2e: no hooks' "$srcfile"; then hooks= ldhooks=; fi
san=$(cat "$build/sanitize-flags" 2>/dev/null || true)   # a sanitized build's flags
extra=$(sed -n 's/.*e2e: cflags \([^*]*\).*/\1/p' "$srcfile" | head -n 1)
expect=$e2e/$name.expect
# a variant for one compiler and link, then one for the hook mode
if [ -f "$e2e/$name.$(basename "$cc").$link.expect" ]; then expect=$e2e/$name.$(basename "$cc").$link.expect; fi
if [ -n "$mode" ] && [ -f "$e2e/$name.${mode%-nopie}.expect" ]; then expect=$e2e/$name.${mode%-nopie}.expect; fi
[ -z "${E2E_EXPECT:-}" ] || expect=$e2e/$E2E_EXPECT
objs=
# shellcheck disable=SC2086
"$compiler" $san -O1 $extra $pie -DCAPPROF_ENABLED -g -I"$src/include" -I"$e2e" $hooks -c "$srcfile" -o main.o
objs=main.o
if [ -f "$e2e/${name}_noinstr.c" ]; then
  # shellcheck disable=SC2086
  "$cc" $san -O1 -g $pie -I"$src/include" -I"$e2e" -c "$e2e/${name}_noinstr.c" -o noinstr.o
  objs="$objs noinstr.o"
fi
if [ -f "$e2e/${name}_lib.c" ]; then      # an instrumented library it dlopens
  "$cc" $san -O1 -g -fPIC -shared -I"$src/include" -I"$e2e" $hooks "$e2e/${name}_lib.c" \
    -o "lib${name}_lib.so"
fi
if [ "$link" = shared ]; then
  lib="-L$build -lcapprof -Wl,-rpath,$build"
elif [ "$link" = fullstatic ]; then      # static libc too: no dlsym behind us
  lib="-static $build/libcapprof.a"
else
  lib="$build/libcapprof.a"
  # glibc defines __fentry__ (gprof's) but not __return__: without this an
  # executable does not export the static runtime's __return__ to libraries
  # it dlopens (docs/runtime.md; 'capprof ldflags --static' prints it).
  [ -z "$mode" ] || lib="$lib -Wl,--export-dynamic-symbol=__return__"
fi
# shellcheck disable=SC2086
"$compiler" $san $ldhooks -o prog $objs $lib -lpthread -ldl

status=0
vars=$(cat "$e2e/$name.env" 2>/dev/null || true)    # NAME.env: VAR=value ... for the run
# The default sampling runs (a ring buffer per hooked thread), but no
# unhooking: the calls an unhooked function makes later are counted per
# function, not per call path, and these checks are per path. NAME.env or
# the test's environment may say otherwise.
# shellcheck disable=SC2086
env CAPPROF_UNHOOK="${CAPPROF_UNHOOK:-off}" $vars E2E_MAP=map CAPPROF_OUTPUT="$work/%n.%p.capprof" ./prog > stdout.txt 2> stderr.txt &
pid=$!
wait $pid || status=$?
if [ $status -ne 0 ]; then
  echo "prog exited with status $status"; cat stderr.txt; exit 1
fi
if [ -s stderr.txt ]; then echo "unexpected stderr:"; cat stderr.txt; exit 1; fi

dump=$work/prog.$pid.capprof
[ -f "$dump" ] || { echo "no dump $dump"; ls; exit 1; }
[ ! -f gmon.out ] || { echo "gprof's gmon.out was written"; exit 1; }
[ ! -f "$name.expect.gen" ] || expect=$work/$name.expect.gen
"$build/tests/e2e_check" "$dump" map "$expect"
if [ -f "$e2e/$name.child.expect" ]; then
  child=$(ls "$work"/prog.*.capprof | grep -v "prog.$pid.capprof" | head -n 1)
  [ -n "$child" ] || { echo "no dump from the child process"; exit 1; }
  "$build/tests/e2e_check" "$child" map "$e2e/$name.child.expect"
fi
if [ -f "$e2e/$name.report" ]; then       # lines 'capprof report' must show
  "$build/capprof" report "$dump" > report.txt
  while IFS= read -r want; do
    grep -qF "$want" report.txt || { echo "report lacks: $want"; cat report.txt; exit 1; }
  done < "$e2e/$name.report"
fi
# Lines 'capprof excludes' must print (not for variant runs, E2E_TAG).
if [ -f "$e2e/$name.excludes" ] && [ -z "${E2E_TAG:-}" ]; then
  "$build/capprof" excludes "$dump" > excludes.txt
  while IFS= read -r want; do
    grep -qF -- "$want" excludes.txt || { echo "excludes lacks: $want"; cat excludes.txt; exit 1; }
  done < "$e2e/$name.excludes"
  [ "$("$build/capprof" excludes --flags-only "$dump")" = \
    "-finstrument-functions-exclude-function-list=tiny" ] || {
    echo "excludes --flags-only:"; "$build/capprof" excludes --flags-only "$dump"; exit 1; }
  # A merged dump keeps what throttling recorded.
  "$build/capprof" merge -o merged.capprof "$dump" "$dump"
  "$build/capprof" report merged.capprof > merged.txt
  grep -q "tiny: 1 path, 600,000 calls, 1 in 32 timed from" merged.txt || {
    echo "merged report lacks the throttled function"; cat merged.txt; exit 1; }
fi
echo "ok: $name ($(basename "$cc"), $link${mode:+, $mode})"
