#!/bin/sh
# dumpfiles.sh BUILD SRC CC -- dump files under failure: an over-long
# CAPPROF_OUTPUT is refused with one line and the default used; planted
# temporary names do not block the dump; permission denied and disk full are
# reported as such, naming the step and file; a file left by a killed writer
# is named an interrupted dump by the tool. The program's output and exit
# status never change.
set -eu
build=$1 src=$2 cc=$3
san=$(cat "$build/sanitize-flags" 2>/dev/null || true)   # a sanitized build
work=$build/tests/harden-work/dumpfiles
if mountpoint -q "$work/full" 2>/dev/null; then umount "$work/full"; fi
rm -rf "$work"; mkdir -p "$work"; cd "$work"
"$cc" $san -O1 -finstrument-functions "$src/tests/harden/dumpfiles_prog.c" "$build/libcapprof.a" \
  -lpthread -ldl -o prog
fail=0
no() { echo "FAIL: $*"; fail=1; }

# 1. Over-long pattern: one line, default name in the current directory.
mkdir long && cd long
long=$(printf 'a%.0s' $(seq 1 1500))
CAPPROF_OUTPUT="$work/long/$long" ../prog > out.txt 2> err.txt || no "long: exit status"
grep -qx "ok 5050" out.txt || no "long: output"
[ "$(wc -l < err.txt)" = 1 ] && grep -q "CAPPROF_OUTPUT is longer than 1023 bytes" err.txt ||
  { no "long: stderr"; cat err.txt; }
ls prog.*.capprof >/dev/null 2>&1 || no "long: no dump under the default name"
[ -z "$(ls | grep aaaa || true)" ] || no "long: a cut name was used"
cd ..

# 2. Temporary names planted in advance (the old, predictable ones).
mkdir plant
CAPPROF_OUTPUT="$work/plant/d.capprof" ./prog plant "$work/plant/d.capprof" > out.txt 2> err.txt ||
  no "plant: exit status"
[ -s err.txt ] && { no "plant: stderr"; cat err.txt; }
[ -f plant/d.capprof ] || no "plant: no dump"

# 3. Permission denied (as nobody when root, else a read-only directory).
mkdir ro; chmod 555 ro
run=; [ "$(id -u)" = 0 ] && run="setpriv --reuid=nobody --regid=nogroup --clear-groups --"
$run env CAPPROF_OUTPUT="$work/ro/d.capprof" ./prog > out.txt 2> err.txt || no "eacces: exit status"
grep -q "cannot write dump $work/ro/d.capprof: creating $work/ro/d.capprof.tmp[0-9a-f]*: permission denied" err.txt ||
  { no "eacces: message"; cat err.txt; }

# 4. Disk full: a full tmpfs (needs root to mount).
if [ "$(id -u)" = 0 ] && mkdir full && mount -t tmpfs -o size=64k tmpfs full 2>/dev/null; then
  dd if=/dev/zero of=full/fill bs=1k count=200 2>/dev/null || true
  CAPPROF_OUTPUT="$work/full/d.capprof" ./prog > out.txt 2> err.txt || no "enospc: exit status"
  grep -q "cannot write dump $work/full/d.capprof: writing $work/full/d.capprof.tmp[0-9a-f]*: no space left on device" err.txt ||
    { no "enospc: message"; cat err.txt; }
  [ -z "$(ls full | grep tmp || true)" ] || no "enospc: temporary file left behind"
  umount full
else
  echo "note: disk-full case skipped (needs root to mount a tmpfs)"
fi

# 5. A file left by a killed writer: the header is written last, over zeros.
head -c 3000 /dev/zero > left.capprof.tmp0123456789ab
if "$build/capprof" info left.capprof.tmp0123456789ab > out.txt 2> err.txt; then no "interrupted: accepted"; fi
grep -q "an interrupted dump" err.txt || { no "interrupted: message"; cat err.txt; }

[ $fail = 0 ] && echo "ok: dump files"
exit $fail
