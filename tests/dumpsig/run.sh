#!/bin/sh
# run.sh CC LIBCAPPROF CAPPROF WORK -- dumps on demand (src/dump/dumpsig_posix.c):
# CAPPROF_DUMP_SIGNAL writes a dump per signal and the program goes on;
# without it the signal keeps its default action; CAPPROF_DUMP_ON_SIGNAL
# writes a last dump on SIGTERM/SIGINT and the exit status stays the one the
# signal gives; a program's own SIGTERM handler is left alone;
# CAPPROF_DUMP_INTERVAL dumps periodically; a bad signal name is one line.
set -u
CC=$1 LIB=$2 CAPPROF=$3 W=$4
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$W" && mkdir -p "$W" && cd "$W" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
$CC -O1 -g -finstrument-functions "$HERE/service.c" "$LIB" -lpthread -o service || exit 1

# wait_for CMD: up to 10 s for the shell command CMD to succeed
wait_for() {
  i=0
  while ! eval "$1"; do
    i=$((i + 1)); [ $i -gt 200 ] && return 1
    sleep 0.05
  done
}
count() { ls $1 2>/dev/null | wc -l; }   # $1: a glob
# start NAME [ENV...]: the service in the background, dumps in NAME/
start() {
  name=$1; shift
  mkdir -p "$name"
  env CAPPROF_OUTPUT="$W/$name/d.capprof" "$@" ./service "$name/ready" "$name/stop" \
    >"$name/out.txt" 2>"$name/err.txt" &
  pid=$!
  wait_for "[ -e $name/ready ]" || fail "$name: service did not start"
}
# calls DUMP: the calls of 'work' in a dump
calls() {
  "$CAPPROF" export --format=csv "$1" 2>/dev/null |
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i } $1 == "work" { print $col["calls"] }'
}

# 1. one dump per SIGUSR1, the program goes on; the exit dump as well
start usr1 CAPPROF_DUMP_SIGNAL=USR1
kill -USR1 $pid
wait_for "[ \$(count 'usr1/*.capprof') -ge 1 ]" || fail "usr1: no dump after the first signal"
sleep 0.1
kill -USR1 $pid
wait_for "[ \$(count 'usr1/*.capprof') -ge 2 ]" || fail "usr1: no dump after the second signal"
touch usr1/stop
wait $pid; st=$?
[ $st = 0 ] || fail "usr1: exit status $st, wanted 0"
grep -q stopped usr1/out.txt || fail "usr1: the program did not go on to its end"
[ "$(count 'usr1/*.capprof')" = 3 ] || fail "usr1: $(ls usr1)"
first=$(calls usr1/d.capprof) second=$(calls usr1/d.1.capprof) last=$(calls usr1/d.2.capprof)
[ -n "$first" ] && [ -n "$second" ] && [ -n "$last" ] && [ "$first" -lt "$second" ] &&
  [ "$second" -lt "$last" ] || fail "usr1: calls of work do not grow: $first $second $last"
[ -s usr1/err.txt ] && fail "usr1: stderr: $(cat usr1/err.txt)"
"$CAPPROF" info usr1/d.capprof | grep -q 'running at dump' || fail "usr1: info of a live dump"

# 2. off by default: SIGUSR1 ends the program, and no dump
start off
kill -USR1 $pid
wait $pid; st=$?
[ $st = 138 ] || fail "off: exit status $st, wanted 138 (SIGUSR1's default action)"
[ "$(count 'off/*.capprof')" = 0 ] || fail "off: a dump without CAPPROF_DUMP_SIGNAL"

# 3. a last dump on SIGTERM, the status unchanged (143); also SIGINT (130),
#    named with SIG and in lower case
start term CAPPROF_DUMP_ON_SIGNAL=TERM,sigint
kill -TERM $pid
wait $pid; st=$?
[ $st = 143 ] || fail "term: exit status $st, wanted 143"
[ "$(count 'term/*.capprof')" = 1 ] || fail "term: $(ls term)"
[ -n "$(calls term/d.capprof)" ] || fail "term: the dump has no calls of work"
# (a shell starts background jobs with SIGINT ignored: python3 restores it)
start int CAPPROF_DUMP_ON_SIGNAL=TERM,sigint python3 -c \
  'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])'
kill -INT $pid
wait $pid; st=$?
[ $st = 130 ] || fail "int: exit status $st, wanted 130"
[ "$(count 'int/*.capprof')" = 1 ] || fail "int: $(ls int)"
start nodump
kill -TERM $pid
wait $pid; st=$?
[ $st = 143 ] || fail "nodump: exit status $st"
[ "$(count 'nodump/*.capprof')" = 0 ] || fail "nodump: a dump without CAPPROF_DUMP_ON_SIGNAL"

# 4. a program that handles SIGTERM itself keeps its handler
mkdir own
CAPPROF_OUTPUT="$W/own/d.capprof" CAPPROF_DUMP_ON_SIGNAL=TERM ./service own/ready own/stop own-term \
  >own/out.txt 2>&1 &
pid=$!
wait_for "[ -e own/ready ]" || fail "own: service did not start"
kill -TERM $pid
wait $pid; st=$?
[ $st = 7 ] && grep -q 'own handler' own/out.txt || fail "own: status $st: $(cat own/out.txt)"
[ "$(count 'own/*.capprof')" = 1 ] || fail "own: the exit dump: $(ls own)"

# 5. periodic dumps
start every CAPPROF_DUMP_INTERVAL=0.2
wait_for "[ \$(count 'every/*.capprof') -ge 3 ]" || fail "every: fewer than 3 periodic dumps"
touch every/stop
wait $pid
"$CAPPROF" report every/d.1.capprof >/dev/null || fail "every: a periodic dump does not read"

# 6. a name that is not a signal: one line, the program runs as usual
start bad CAPPROF_DUMP_SIGNAL=NOSUCH CAPPROF_DUMP_ON_SIGNAL=KILL
touch bad/stop
wait $pid; st=$?
[ $st = 0 ] || fail "bad: exit status $st"
[ "$(wc -l <bad/err.txt)" = 2 ] && grep -q 'CAPPROF_DUMP_SIGNAL: not a signal capprof can use: NOSUCH' bad/err.txt ||
  fail "bad: $(cat bad/err.txt)"

[ $fails = 0 ] && echo "dumpsig: all passed" && exit 0
echo "dumpsig: $fails failures"
exit 1
