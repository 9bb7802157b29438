#!/bin/sh
# ui.sh CAPPROF CC CXX RUNTIME_LIB WORKDIR -- the tool as users meet it:
# callers/callees with an ambiguous name, the filters of report, tree and
# export (thread, focus, hide, time threshold), C++ names shortened for the
# terminal, colour and the pager on a terminal (a pty made by script(1)),
# lines fitted to the terminal's width, diff of two builds with differently
# named executables, the hint for a build without -g.
set -eu
esc=$(printf '\033')
CAPPROF=$1 CC=$2 CXX=$3 LIB=$4 W=$5
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$W" && mkdir -p "$W" && cd "$W"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect() {
  want=$1; shift
  set +e; "$@" >out.txt 2>err.txt; got=$?; set -e
  [ "$got" = "$want" ] || fail "$* exited $got, wanted $want: $(cat err.txt)"
  if [ "$want" != 0 ]; then
    [ -s err.txt ] || fail "$*: no message"
    grep -qv '^capprof: ' err.txt && fail "$*: stray stderr: $(cat err.txt)"
  fi
  return 0
}
# tty CMD: run the shell command CMD on a pseudo-terminal 120 columns wide;
# its output (with the terminal's CR LF line ends) goes to tty.txt.
tty() {
  script -qec "stty cols 120 rows 40; $1" /dev/null </dev/null >tty.txt 2>&1 || true
  tr -d '\r' <tty.txt | sed "s/$esc\[[0-9;]*m//g" >plain.txt
  tr -d '\r' <tty.txt >tty2.txt && mv tty2.txt tty.txt
}

$CC -O0 -g -finstrument-functions "$HERE/calls.c" "$LIB" -lpthread -o calls
# The filters and names are checked on the hooks' figures: no samples, so a run
# that happens to catch one does not change the columns (templates below keeps
# the default: report must fit its width either way).
CAPPROF_SAMPLE=off CAPPROF_OUTPUT=d.capprof ./calls >/dev/null
D=d.capprof

# ---- ambiguous names: listed, exit 1; --all shows each -----------------------
expect 1 "$CAPPROF" callers i "$D"             # main, middle, fib
[ "$(grep -c '^capprof:   ' err.txt)" = 3 ] || fail "ambiguous callers: $(cat err.txt)"
grep -q "matches 3 functions" err.txt || fail "ambiguous callers says how many"
[ -s out.txt ] && fail "ambiguous callers printed a profile"
expect 1 "$CAPPROF" callees i "$D"
expect 0 "$CAPPROF" callers --all i "$D"
[ "$(grep -c '^ *calls  *incl  *self  *incl/call  *self/call  *elapsed incl%  *function$' out.txt)" = 3 ] ||
  fail "callers --all: $(cat out.txt)"
expect 0 "$CAPPROF" callers fib "$D"           # exact name: no ambiguity
expect 0 "$CAPPROF" callers iddl "$D"          # a part of one name only

# ---- filters -------------------------------------------------------------------
worker=$("$CAPPROF" tree "$D" | awk '/^thread / { t = $2 } / worker$/ { print t; exit }')
[ -n "$worker" ] || fail "no worker thread"
expect 0 "$CAPPROF" report -t "$worker" "$D"
grep -q ' worker ' out.txt && ! grep -q ' main ' out.txt && ! grep -q ' fib ' out.txt ||
  fail "report -t: $(cat out.txt)"
expect 1 "$CAPPROF" report -t 999999999 "$D"
expect 0 "$CAPPROF" tree -m --focus middle "$D"
sed -n 3p out.txt | grep -Eq '^ +3 .*  middle$' || fail "tree --focus middle: $(cat out.txt)"
sed -n 4p out.txt | grep -Eq '^ +10 .*    leaf$' || fail "tree --focus: leaf under middle"
# (the legend of figures marked '~' may follow: short calls, a costlier probe)
[ "$(grep -vc '^~ mostly probe cost' out.txt)" = 4 ] || fail "tree --focus shows more than middle's subtree: $(cat out.txt)"
expect 0 "$CAPPROF" report --hide middle "$D"
grep -q ' middle ' out.txt && fail "report --hide middle still lists it"
grep -Eq ' 10 .* leaf ' out.txt || fail "report --hide keeps the callees' calls"
expect 0 "$CAPPROF" tree -m --hide middle --sort=name "$D"
grep -Eq '^ +3 .*    leaf$' out.txt || fail "tree --hide: main's leaf calls move up: $(cat out.txt)"
expect 0 "$CAPPROF" tree -m --hide 'f?b' "$D"
grep -q 'fib' out.txt && fail "tree --hide with a glob"
expect 0 "$CAPPROF" report --time-filter=1s "$D"
[ "$(grep -vc '^~ mostly probe cost' out.txt)" = 3 ] || fail "report --time-filter=1s lists functions: $(cat out.txt)"
expect 0 "$CAPPROF" tree --time-filter=50us "$D"
grep -Eq '  main$' out.txt && ! grep -q '  fib$' out.txt || fail "tree --time-filter=50us"
expect 2 "$CAPPROF" report --time-filter=fast "$D"
expect 1 "$CAPPROF" tree --focus no_such_function "$D"
expect 0 "$CAPPROF" export --format=json --focus middle -o focus.json "$D"
python3 "$HERE/check_exports.py" json focus.json || fail "export --focus json"
python3 - focus.json <<'PY' || fail "export --focus: functions other than middle and leaf"
import json, sys
names = sorted(f["name"] for f in json.load(open(sys.argv[1]))["functions"])
sys.exit(names != ["leaf", "middle"])
PY
expect 0 "$CAPPROF" export --format=csv --hide middle -t "$worker" -o hide.csv "$D"
python3 "$HERE/check_exports.py" csv hide.csv || fail "export --hide csv"
grep -q '^middle,' hide.csv && fail "export --hide middle"

# ---- C++ names: templates shortened on the terminal, whole in exports --------
$CXX -O0 -g -finstrument-functions "$HERE/templates.cpp" "$LIB" -lpthread -o templates
CAPPROF_OUTPUT=t.capprof ./templates
expect 0 "$CAPPROF" report t.capprof
grep -q 'Table<std::__cxx11::basic_string' out.txt && fail "report shows long templates"
grep -q 'Table<\.\.\.>::put' out.txt || fail "report: no Table<...>::put: $(grep put out.txt)"
expect 0 "$CAPPROF" report --full-names --width=0 t.capprof
grep -q 'Table<std::__cxx11::basic_string<char, std::char_traits<char>' out.txt ||
  fail "--full-names: $(grep put out.txt)"
grep -q 'operator<' out.txt || true
expect 0 "$CAPPROF" export --format=csv -o t.csv t.capprof
grep -q 'Table<std::__cxx11::basic_string<char' t.csv || fail "csv export lost the full name"
expect 0 "$CAPPROF" tree t.capprof
awk 'length($0) > 400 { exit 1 }' out.txt || fail "tree lines over 400 columns"

# ---- terminal: colour, NO_COLOR, pager, width ------------------------------------
esc=$(printf '\033')
tty "PAGER= '$CAPPROF' report t.capprof"
grep -q "$esc\[" tty.txt || fail "no colour on a terminal: $(head -3 tty.txt)"
awk 'length($0) > 120 { exit 1 }' plain.txt || fail "terminal lines wider than 120 columns"
grep -q '\.\.\.' tty.txt || fail "no name cut to the terminal's width"
tty "PAGER= NO_COLOR=1 '$CAPPROF' report t.capprof"
grep -q "$esc\[" tty.txt && fail "colour despite NO_COLOR"
tty "PAGER= '$CAPPROF' report --no-color t.capprof"
grep -q "$esc\[" tty.txt && fail "colour despite --no-color"
"$CAPPROF" report t.capprof >piped.txt
grep -q "$esc" piped.txt && fail "colour into a pipe"
awk 'length($0) > 80 { exit 1 }' piped.txt || fail "piped report wider than 80 columns"
"$CAPPROF" report --width=0 t.capprof | awk 'length($0) > 120 { n++ } END { exit !n }' ||
  fail "--width=0 cut the names"
"$CAPPROF" report --color=always t.capprof | grep -q "$esc\[" || fail "--color=always"
tty "PAGER='sed s/^/PAGED:/' '$CAPPROF' report t.capprof"
grep -q '^PAGED:.*self%' tty.txt || fail "no pager on a terminal: $(head -3 tty.txt)"
tty "PAGER='sed s/^/PAGED:/' CAPPROF_PAGER= '$CAPPROF' tree t.capprof"
grep -q 'PAGED:' tty.txt && fail "CAPPROF_PAGER= must turn the pager off"
tty "PAGER='sed s/^/PAGED:/' '$CAPPROF' --no-pager tree t.capprof"
grep -q 'PAGED:' tty.txt && fail "--no-pager"
grep -q '^thread ' tty.txt || fail "--no-pager output: $(head -3 tty.txt)"
PAGER='sed s/^/PAGED:/' "$CAPPROF" report t.capprof | grep -q PAGED && fail "pager into a pipe"
expect 0 "$CAPPROF" report --width=110 t.capprof
awk 'length($0) > 110 { exit 1 }' out.txt || fail "--width=110"
expect 2 "$CAPPROF" report --color=sometimes t.capprof

# ---- diff of two builds with differently named executables -----------------------
cp calls calls-new
CAPPROF_SAMPLE=off CAPPROF_OUTPUT=new.capprof ./calls-new >/dev/null
expect 0 "$CAPPROF" diff "$D" new.capprof
grep -q '\[new\]' out.txt && fail "diff of renamed executables: $(cat out.txt)"
grep -Eq '^ +177 +177 +\+0\.0% .* fib$' out.txt || fail "diff: fib matched by name"
expect 0 "$CAPPROF" diff --keep-modules "$D" new.capprof
grep -Eq ' fib  \[new\]$' out.txt && grep -Eq ' fib  \[gone\]$' out.txt ||
  fail "diff --keep-modules keeps modules apart: $(cat out.txt)"
expect 0 "$CAPPROF" diff "$D" -- new.capprof
grep -q ' fib$' out.txt && [ "$(grep -c ' fib$' out.txt)" = 1 ] || fail "diff of runs by name"

# ---- a build without -g: one line says why locations show as the module -------
$CC -O0 -finstrument-functions "$HERE/calls.c" "$LIB" -lpthread -o nog
CAPPROF_OUTPUT=nog.capprof ./nog >/dev/null
expect 0 "$CAPPROF" report nog.capprof
[ "$(grep -c 'nog has no line information (built without -g?)' err.txt)" = 1 ] ||
  fail "no -g: no hint: $(cat err.txt)"
[ "$(wc -l <err.txt)" = 1 ] || fail "no -g: more than the hint: $(cat err.txt)"
expect 0 "$CAPPROF" report "$D"
grep -q 'line information' err.txt && fail "-g build: hint given: $(cat err.txt)"

[ $fails = 0 ] && echo "ui: all passed" && exit 0
echo "ui: $fails failures"
exit 1
