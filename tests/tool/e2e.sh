#!/bin/sh
# e2e.sh CAPPROF CC RUNTIME_LIB WORKDIR GEN_DUMP -- end-to-end test of the capprof
# tool on tests/tool/calls.c: golden call tree (times masked), report,
# callers/callees, every export format, merge, diff, and the one-line errors
# for bad input (missing, truncated and garbage dumps, unknown options, a
# rebuilt and a deleted binary).
set -eu
CAPPROF=$1 CC=$2 LIB=$3 W=$4 GEN=$5
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$W" && mkdir -p "$W" && cd "$W"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect STATUS CMD...: runs CMD, checks its exit status and, for errors,
# that stderr is lines starting "capprof: ".
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

$CC -O0 -g -finstrument-functions "$HERE/calls.c" "$LIB" -lpthread -o calls
# The golden tree and the column checks are the hooks' figures: no samples
# (a run that caught one would rank by cpu; tool_views covers that case).
CAPPROF_SAMPLE=off ./calls >/dev/null
CAPPROF_SAMPLE=off ./calls >/dev/null
set -- calls.*.capprof
D1=$1 D2=$2

# the CAP tree, times masked
expect 0 "$CAPPROF" tree --sort=name "$D1"
python3 "$HERE/mask.py" <out.txt >tree.txt
diff -u "$HERE/calls.tree.golden" tree.txt || fail "tree differs from calls.tree.golden"
expect 0 "$CAPPROF" tree --merge-threads --depth 2 --prune 1 --raw --location "$D1"
grep -q '^all threads' out.txt || fail "tree --merge-threads"
grep -Eq ' main  \(calls.c:[0-9]+\)$' out.txt || fail "tree --location"
grep -q '      fib$' out.txt && fail "tree --depth 2 shows depth 3"

# the flat profile: fib(10) is 177 calls, leaf 3 + 5 + 2
expect 0 "$CAPPROF" report --sort=calls --limit 3 "$D1"
grep -Eq '  177 .* fib  \(calls.c:[0-9]+\)$' out.txt || fail "report: fib: $(cat out.txt)"
grep -Eq '   10 .* leaf  \(calls.c:[0-9]+\)$' out.txt || fail "report: leaf"
[ "$(grep -vc '^~ mostly probe cost' out.txt)" = 6 ] || fail "report --limit 3"
for s in self total calls avg max name; do expect 0 "$CAPPROF" report -s $s "$D1"; done
expect 0 "$CAPPROF" report --sum "$D1" "$D2"
grep -Eq '  354 .* fib ' out.txt || fail "report --sum of two dumps sums calls"
expect 0 "$CAPPROF" report "$D1" "$D2"
grep -Eq ' 177 +2/2 +fib$' out.txt || fail "report of two runs: $(cat out.txt)"
# the calls column only (characters 65-76): times such as "14.0 us" may end in .0
awk 'NR > 5 { print substr($0, 65, 12) }' out.txt | grep -q '\.0 *$' &&
  fail "report of two runs prints whole calls with a decimal"
# every column says what it is, the same words in report, tree, callers
expect 0 "$CAPPROF" report "$D1"
grep -q '^elapsed self%  *elapsed incl  *calls  function$' out.txt ||
  fail "report header: $(sed -n 3p out.txt)"
sed -n 2p out.txt | grep -q '^ranked by elapsed: .*no samples' || fail "report: what ranks: $(sed -n 2p out.txt)"
expect 0 "$CAPPROF" report -q -F calls,elapsed-self,timed,self/call --width=0 "$D1"
grep -q '^ *calls  *elapsed self  *timed  *self/call  function$' out.txt ||
  fail "report -q -F: $(head -2 out.txt)"
expect 2 "$CAPPROF" report -F calls,bogus "$D1"
expect 2 "$CAPPROF" report --weight=wall "$D1"
expect 0 "$CAPPROF" tree "$D1"
grep -q '^ *calls  *incl  *self  *incl/call  *self/call  *incl min  *incl max  *elapsed incl%  function$' out.txt ||
  fail "tree header: $(sed -n 2p out.txt)"

# callers and callees
expect 0 "$CAPPROF" callers middle "$D1"
grep -Eq '^ +1 .*  worker$' out.txt && grep -Eq '^ +1 .*  apply$' out.txt &&
  grep -Eq '^ +1 .*  main$' out.txt || fail "callers middle: $(cat out.txt)"
expect 0 "$CAPPROF" callees middle "$D1"
grep -Eq '^ +10 .*  leaf$' out.txt || fail "callees middle: $(cat out.txt)"
expect 1 "$CAPPROF" callers no_such_function "$D1"

# exports
for f in json speedscope csv folded; do
  expect 0 "$CAPPROF" export --format=$f -o out.$f "$D1" "$D2"
  python3 "$HERE/check_exports.py" $f out.$f || fail "export $f"
done
expect 0 "$CAPPROF" export --format=callgrind -o callgrind.out "$D1"
callgrind_annotate --inclusive=yes callgrind.out >annotate.txt 2>&1 || fail "callgrind_annotate"
grep -q 'calls.c:fib' annotate.txt && grep -q 'calls.c:main' annotate.txt ||
  fail "callgrind_annotate output: $(head -30 annotate.txt)"
# run from the source's directory, callgrind_annotate lists each function once
mkdir cgsrc && cp "$HERE/calls.c" cgsrc/ && (
  cd cgsrc && $CC -O0 -g -finstrument-functions calls.c "$LIB" -lpthread -o calls &&
  CAPPROF_OUTPUT=cg.capprof ./calls >/dev/null &&
  "$CAPPROF" export --format=callgrind -o cg.out cg.capprof &&
  callgrind_annotate --inclusive=yes --threshold=100 cg.out >annotate.txt) || fail "callgrind in cgsrc"
[ "$(grep -cE ':fib( \[calls\])?$' cgsrc/annotate.txt)" = 1 ] ||
  fail "callgrind_annotate lists fib twice: $(grep fib cgsrc/annotate.txt)"
# one file per thread besides the summed one
expect 0 "$CAPPROF" export --format=callgrind --per-thread -o pt.out "$D1"
[ -s pt.out ] && grep -q '^thread: 1$' pt.out-01 && grep -q '^thread: 2$' pt.out-02 &&
  [ ! -e pt.out-03 ] || fail "callgrind --per-thread: $(ls pt.out*)"
for part in pt.out-01 pt.out-02; do
  callgrind_annotate $part >/dev/null 2>&1 || fail "callgrind_annotate $part"
done
grep -q 'fn=.*worker' pt.out-01 && fail "thread 1's part has the worker thread's function"
grep -q 'fn=.*worker' pt.out-02 || fail "thread 2's part lacks worker"
expect 2 "$CAPPROF" export --format=csv --per-thread -o x.csv "$D1"
# a program ended by exit() inside main: one call open, said in the singular
cat >exit_in_main.c <<'SRC'
#include <stdlib.h>
int main(void) { exit(0); }
SRC
$CC -O0 -g -finstrument-functions exit_in_main.c "$LIB" -lpthread -o exit_in_main
CAPPROF_OUTPUT=exit.capprof ./exit_in_main
expect 0 "$CAPPROF" info exit.capprof
grep -q ' 1 call  .*, 1 call open$' out.txt || fail "info: $(grep tid out.txt)"
# how the hooks read the TSC is in the dump: rdtscp at both ends by default,
# CAPPROF_CLOCK=tsc-mixed as before; a merge of the two does not say
if grep -q '^clock: *rdtsc (invariant TSC)' out.txt && grep -qw rdtscp /proc/cpuinfo &&
   [ -z "${CAPPROF_CLOCK:-}" ]; then
  grep -q '^clock: *rdtsc (invariant TSC), rdtscp at entry and exit, ' out.txt ||
    fail "info: default clock reads: $(grep '^clock' out.txt)"
  CAPPROF_CLOCK=tsc-mixed CAPPROF_OUTPUT=mixed.capprof ./exit_in_main
  expect 0 "$CAPPROF" info mixed.capprof
  grep -q '^clock: *rdtsc (invariant TSC), rdtsc at entry, rdtscp at exit, ' out.txt ||
    fail "info: tsc-mixed clock reads: $(grep '^clock' out.txt)"
  expect 0 "$CAPPROF" merge -o mixed2.capprof exit.capprof mixed.capprof
  expect 0 "$CAPPROF" info mixed2.capprof
  grep -q '^clock: *rdtsc (invariant TSC), [0-9]' out.txt ||
    fail "info: merged clock reads: $(grep '^clock' out.txt)"
fi

# the HTML page's data (its browser tests are tests/html/): two runs, a
# pruned page, a diff page, bad --format and --output for diff
PAGE="$HERE/../html/check_page.py"
expect 0 "$CAPPROF" export --format=html -o out.html "$D1" "$D2"
python3 "$PAGE" out.html fib=177 leaf=10 || fail "export html"
expect 0 "$CAPPROF" export --format=html --max-nodes=12 -o small.html "$D1"
python3 "$PAGE" small.html fib=177 --pruned || fail "export html --max-nodes"
expect 2 "$CAPPROF" export --format=html --max-nodes=-1 -o x.html "$D1"
expect 0 "$CAPPROF" diff --format=html -o diff.html "$D1" -- "$D2"
python3 "$PAGE" diff.html fib=177 || fail "diff --format=html"
expect 2 "$CAPPROF" diff --format=pdf "$D1" "$D2"
expect 2 "$CAPPROF" diff -o x.html "$D1" "$D2"

# merge and diff
expect 0 "$CAPPROF" merge -o merged.capprof "$D1" "$D2"
expect 0 "$CAPPROF" report merged.capprof
grep -Eq '  354 .* fib  \(calls.c:[0-9]+\)$' out.txt || fail "merged report: $(cat out.txt)"
expect 0 "$CAPPROF" tree --sort=name merged.capprof
python3 "$HERE/mask.py" <out.txt | sed 's/^ *[0-9,]* /N /; s/[0-9,]* calls,/N calls,/' >m.txt
sed 's/^ *[0-9,]* /N /; s/[0-9,]* calls,/N calls,/' "$HERE/calls.tree.golden" >g.txt
diff -u g.txt m.txt || fail "merged tree has other paths"
expect 0 "$CAPPROF" info merged.capprof
for f in json speedscope; do
  expect 0 "$CAPPROF" export --format=$f -o merged.$f merged.capprof
  python3 "$HERE/check_exports.py" $f merged.$f || fail "export $f of a merged dump"
done
grep -q '"file":"[^"]*calls.c","line":[1-9]' merged.json || fail "merged dump lost file:line"
expect 0 "$CAPPROF" merge -o merged2.capprof merged.capprof "$D1"
expect 0 "$CAPPROF" report --sort=calls --limit 1 merged2.capprof
grep -Eq '  531 .* fib  \(calls.c:[0-9]+\)$' out.txt || fail "merge of a merged dump: $(cat out.txt)"
expect 0 "$CAPPROF" diff "$D1" "$D2"
[ "$(grep -c '+0.0%' out.txt)" -ge 6 ] || fail "diff: $(cat out.txt)"
expect 0 "$CAPPROF" diff --sort=calls --limit 2 merged.capprof "$D1"

# names with quotes, commas, semicolons, newlines, escapes, bad UTF-8
"$GEN" nasty.capprof nasty 12
for f in json speedscope csv folded; do
  expect 0 "$CAPPROF" export --format=$f -o nasty.$f nasty.capprof
  python3 "$HERE/check_exports.py" $f nasty.$f || fail "export $f of nasty names"
done
expect 0 "$CAPPROF" export --format=html -o nasty.html nasty.capprof
python3 "$PAGE" nasty.html || fail "export html of nasty names"
expect 0 "$CAPPROF" export --format=callgrind -o nasty.callgrind nasty.capprof
callgrind_annotate nasty.callgrind >/dev/null 2>&1 || fail "callgrind_annotate of nasty names"
expect 0 "$CAPPROF" tree nasty.capprof
LC_ALL=C grep -q "$(printf '\033')" out.txt && fail "tree printed an escape sequence"
expect 0 "$CAPPROF" merge -o nasty2.capprof nasty.capprof nasty.capprof
expect 0 "$CAPPROF" report nasty2.capprof

# --help everywhere; unknown options and commands
for c in info tree report callers callees export merge diff; do
  expect 0 "$CAPPROF" $c --help
  expect 2 "$CAPPROF" $c --no-such-option "$D1"
done
expect 2 "$CAPPROF" no-such-command
expect 2 "$CAPPROF" tree --depth
expect 2 "$CAPPROF" tree --prune 200 "$D1"
expect 2 "$CAPPROF" export --format=xml "$D1"

# bad dumps
expect 1 "$CAPPROF" report missing.capprof
head -c 100 "$D1" >truncated.capprof
expect 1 "$CAPPROF" tree truncated.capprof
: >empty.capprof
expect 1 "$CAPPROF" report empty.capprof
head -c 5000 /dev/urandom >garbage.capprof
expect 1 "$CAPPROF" info garbage.capprof
expect 1 "$CAPPROF" merge -o "$D1" "$D1"
expect 1 "$CAPPROF" report /dev/zero
expect 1 "$CAPPROF" tree .

# a rebuilt and a deleted binary: a warning line, output with
# module+0xoffset names, exit status 3
cp calls calls2 && ./calls2 >/dev/null
set -- calls2.*.capprof
R=$1
$CC -O1 -g -finstrument-functions "$HERE/calls.c" "$LIB" -lpthread -o calls2
expect 3 "$CAPPROF" report "$R"
grep -q 'rebuilt' err.txt || fail "no rebuilt warning: $(cat err.txt)"
grep -q 'calls2+0x' out.txt || fail "no module+offset names"
rm calls2
expect 3 "$CAPPROF" tree "$R"
grep -q 'not found' err.txt || fail "no missing-file warning: $(cat err.txt)"
[ "$(wc -l <err.txt)" = 1 ] || fail "warned more than once"

# calls into a shared library; a stripped program with its DWARF in a
# separate file found through .gnu_debuglink
mkdir so && cd so
cat >lib.c <<'SRC'
int lib_work(int n) { int s = 0; for (int i = 0; i < n; i++) s += i; return s; }
int lib_entry(int n) { return lib_work(n) + lib_work(n / 2); }
SRC
cat >main.c <<'SRC'
int lib_entry(int);
static int local(int k) { return lib_entry(k); }
int main(void) { int s = 0; for (int i = 0; i < 5; i++) s += local(100 * i); return s == 1; }
SRC
$CC -g -O1 -fPIC -shared -finstrument-functions lib.c -o libdemo.so
$CC -g -O1 -finstrument-functions main.c -L. -ldemo -Wl,-rpath,"$W/so" "$LIB" -lpthread -o app
objcopy --only-keep-debug app app.debug && strip -g app && objcopy --add-gnu-debuglink=app.debug app
./app
expect 0 "$CAPPROF" report app.*.capprof
grep -Eq '^ .* 10 .* lib_work  \(lib.c:1\)$' out.txt || fail "shared library: $(cat out.txt)"
grep -Eq '^ .* 5 .* local  \(main.c:2\)$' out.txt || fail "debuglink: $(cat out.txt)"
expect 0 "$CAPPROF" export --format=json -o so.json app.*.capprof
grep -q '"name":"lib_entry","module":"libdemo.so"' so.json || fail "json module of lib_entry"
cd ..

# a binary moved together with its dump is found beside the dump
mkdir moved && mv calls moved/ && cp "$D1" moved/
expect 0 "$CAPPROF" report "moved/$D1"
grep -Eq ' fib  \(calls.c:[0-9]+\)$' out.txt || fail "moved binary not found beside its dump"

[ $fails = 0 ] && echo "e2e: all passed" && exit 0
echo "e2e: $fails failures"
exit 1
