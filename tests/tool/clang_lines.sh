#!/bin/sh
# clang_lines.sh CAPPROF BUILD SRC -- source lines for a Clang binary built
# with plain -g: Clang emits no .debug_aranges for its units (the runtime's,
# built by GCC, may have them), so the symbolizer must find the compile unit
# from the units' own address ranges.
set -eu
capprof=$1 build=$2 src=$3
command -v clang >/dev/null || { echo "clang missing"; exit 1; }
w=$build/tests/clang-lines
rm -rf "$w" && mkdir -p "$w" && cd "$w"
clang -O1 -g -finstrument-functions-after-inlining -I"$src/include" -I"$src/tests/e2e" \
  "$src/tests/e2e/basic.c" "$build/libcapprof.a" -lpthread -o basic
CAPPROF_OUTPUT="$w/basic.capprof" ./basic > /dev/null
"$capprof" report --sort=name basic.capprof > report.txt
for fn in leaf twice rec check_errno main; do
  grep -Eq "  $fn  \(basic\.c:[0-9]+\)" report.txt || { echo "no line for $fn"; cat report.txt; exit 1; }
done
echo "ok: file:line for a Clang -g binary without .debug_aranges"
