#!/bin/sh
# run.sh BUILD SRC CC static|shared|fullstatic NAME -- build tests/e2e/NAME.c (or .cpp)
# with CC and its function hooks (and CAPPROF_ENABLED, for zones), link it
# with libcapprof, run it, and check its dump against NAME.expect. A file
# NAME_noinstr.c is compiled without hooks.
set -eu
build=$1 src=$2 cc=$3 link=$4 name=$5
e2e=$src/tests/e2e
work=$build/tests/e2e-work/$name-$(basename "$cc")-$link
rm -rf "$work"
mkdir -p "$work"
cd "$work"

case $(basename "$cc") in
  clang*) hooks=-finstrument-functions-after-inlining cxx=clang++ ;;
  *) hooks=-finstrument-functions cxx=g++ ;;
esac
compiler=$cc
srcfile=$e2e/$name.c
if [ -f "$e2e/$name.cpp" ]; then compiler=$cxx srcfile=$e2e/$name.cpp; fi
# A program that says "e2e: no hooks" is built without them (zones only).
if grep -q 'e2e: no hooks' "$srcfile"; then hooks=; fi
san=$(cat "$build/sanitize-flags" 2>/dev/null || true)   # a sanitized build's flags
objs=
"$compiler" $san -O1 -DCAPPROF_ENABLED -g -I"$src/include" -I"$e2e" $hooks -c "$srcfile" -o main.o
objs=main.o
if [ -f "$e2e/${name}_noinstr.c" ]; then
  "$cc" $san -O1 -g -I"$src/include" -I"$e2e" -c "$e2e/${name}_noinstr.c" -o noinstr.o
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
fi
# shellcheck disable=SC2086
"$compiler" $san -o prog $objs $lib -lpthread -ldl

status=0
vars=$(cat "$e2e/$name.env" 2>/dev/null || true)    # NAME.env: VAR=value ... for the run
# shellcheck disable=SC2086
env $vars E2E_MAP=map CAPPROF_OUTPUT="$work/%n.%p.capprof" ./prog > stdout.txt 2> stderr.txt &
pid=$!
wait $pid || status=$?
if [ $status -ne 0 ]; then
  echo "prog exited with status $status"; cat stderr.txt; exit 1
fi
if [ -s stderr.txt ]; then echo "unexpected stderr:"; cat stderr.txt; exit 1; fi

dump=$work/prog.$pid.capprof
[ -f "$dump" ] || { echo "no dump $dump"; ls; exit 1; }
expect=$e2e/$name.expect                 # a variant for one compiler and link
[ -f "$e2e/$name.$(basename "$cc").$link.expect" ] && expect=$e2e/$name.$(basename "$cc").$link.expect
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
echo "ok: $name ($(basename "$cc"), $link)"
