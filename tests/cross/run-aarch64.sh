#!/bin/sh
# run-aarch64.sh BUILD SRC -- the portable code path (no rdtsc: the clock is
# clock_gettime) on another architecture: cross-build the runtime and the
# end-to-end program basic.c for aarch64, run it under qemu-aarch64, and check
# its dump natively (the format is the same on every host).
set -eu
build=$1 src=$2
cc=aarch64-linux-gnu-gcc
command -v $cc >/dev/null && command -v qemu-aarch64 >/dev/null || {
  echo "aarch64-linux-gnu-gcc or qemu-aarch64 missing (see .ci/deps)"; exit 1; }
work=$build/tests/aarch64-work
rm -rf "$work"
mkdir -p "$work"
cd "$work"
flags="-std=gnu11 -O2 -g -Wall -Wextra -Werror -I$src/include -I$src/src"
for f in core/calltree core/clock core/runtime dump/dump_write throttle/throttle core/ended core/settings \
         zone/zone sample/sample intercept/intercept posix/os hooks/hooks_posix \
         hooks/unwind_posix dump/dumpsig_posix intercept/plt_posix intercept/tramp_none \
         sample/sample_posix sample/ring_posix features patch/patch patch/patch_none; do
  $cc $flags -fvisibility=hidden -fno-instrument-functions -c "$src/src/$f.c" \
      -o "$(basename $f).o"
done
$cc $flags -fvisibility=hidden -finstrument-functions -c "$src/src/hooks/calib_probe.c" -o calib_probe.o
ar rcs libcapprof.a ./*.o
$cc -O1 -g -I"$src/include" -I"$src/tests/e2e" -finstrument-functions \
    "$src/tests/e2e/basic.c" libcapprof.a -lpthread -o basic
E2E_MAP=map CAPPROF_OUTPUT="$work/basic.capprof" \
  qemu-aarch64 -L /usr/aarch64-linux-gnu ./basic > stdout.txt
# status 3: written, but the aarch64 libc is not on this machine to symbolize
"$build/capprof" info basic.capprof 2>/dev/null > info.txt || [ $? -eq 3 ]
grep -q "clock_gettime" info.txt && grep -q "aarch64" info.txt || {
  echo "expected aarch64 and the OS clock"; cat info.txt; exit 1; }
"$build/tests/e2e_check" basic.capprof map "$src/tests/e2e/basic.expect"
# Zones inside hooked functions and zones only: the zones' stack positions
# must agree with the hooks' on this architecture too. (The longjmp lines are
# left out: a longjmp to a sibling's depth is popped exactly only where the
# runtime reads jmp_buf, x86-64 glibc.)
for z in zones_nested zones_only zones_threads; do
  hooks=-finstrument-functions
  grep -q 'e2e: no hooks' "$src/tests/e2e/$z.c" && hooks=
  $cc -O1 -g -DCAPPROF_ENABLED -I"$src/include" -I"$src/tests/e2e" $hooks \
      "$src/tests/e2e/$z.c" libcapprof.a -lpthread -o $z
  E2E_MAP=$z.map CAPPROF_OUTPUT="$work/$z.capprof" \
    qemu-aarch64 -L /usr/aarch64-linux-gnu ./$z > $z.stdout
  grep -v jump "$src/tests/e2e/$z.expect" > $z.expect
  "$build/tests/e2e_check" $z.capprof $z.map $z.expect
done
echo "ok: aarch64 build runs under qemu with exact counts"
