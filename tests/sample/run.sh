#!/bin/sh
# run.sh BUILD SRC CASE -- the sampling tests (tests/sample/): build a small
# program, run it sampled, and check its dump with check.py or the tool.
# Programs without hooks are sampled by 'capprof run --sample' (threads8
# directly through LD_PRELOAD=libcapprof.so and CAPPROF_SAMPLE, which is what
# it does).
set -eu
build=$1 src=$2 case=$3
here=$src/tests/sample
work=$build/tests/sample-work/$case
rm -rf "$work"
mkdir -p "$work"
cd "$work"
capprof=$build/capprof
plain="gcc -O2 -g -fno-omit-frame-pointer"
preload="env LD_PRELOAD=$build/libcapprof.so CAPPROF_OUTPUT=$work/%n.%p.capprof"
run="$capprof run -q -o $work/%n.%p.capprof"

check() { python3 "$here/check.py" "$capprof" "$@"; }

# Every export of a sampled dump is well formed (tests/tool/check_exports.py)
# and callgrind_annotate reads the extra events, when it is installed.
exports() {
  for f in json csv speedscope folded; do
    "$capprof" export --format=$f -o "out.$f" "$1"
    python3 "$src/tests/tool/check_exports.py" $f "out.$f"
  done
  "$capprof" export --format=callgrind -o out.callgrind "$1"
  # the figure report ranks by comes first: CPU_ns when samples were charged
  # to call paths
  if "$capprof" report -q --width=0 "$1" | head -n 1 | grep -q '^ *cpu self%'; then
    ev="CPU_ns Samples ns"
  else
    ev="ns Samples CPU_ns"
  fi
  grep -q "^events: $ev" out.callgrind
  if command -v callgrind_annotate >/dev/null 2>&1; then
    callgrind_annotate out.callgrind > out.annotate
    grep -q "Events recorded:  $ev" out.annotate
  fi
}

case $case in
ratio)
  $plain "$here/spin3.c" -o spin3
  $run --sample=time:100us -- ./spin3 150 > out.txt
  check ratio spin3.*.capprof
  # The hot function and its hot line, as a new user would look for them.
  "$capprof" report --samples spin3.*.capprof | tee report.txt
  awk '/function$/ { getline; exit !($NF ~ /spin3.c/ && $(NF-1) == "heavy") }' report.txt \
    || { echo "report --samples does not name heavy first"; exit 1; }
  "$capprof" annotate heavy spin3.*.capprof | tee annotate.txt
  hot=$(awk '$4 == "source:" { go = 1; next } go && $2 ~ /%$/ { print $1, $0 }' annotate.txt \
        | tr -d , | sort -n -r | head -n 1)
  echo "hottest line: $hot"
  # the loop's multiply, or the test after it where its wait is seen to retire
  case $hot in *"x = x * 2654435761u + i;"*|*"if ((i & 0xFFFFF) == 0) tick();"*) ;;
    *) echo "annotate: wrong hot line"; exit 1 ;; esac
  exports spin3.*.capprof
  # merge keeps the samples and the sampled tree (symbol keys): the ratio holds
  "$capprof" merge -o merged.capprof spin3.*.capprof spin3.*.capprof
  check ratio merged.capprof
  "$capprof" diff spin3.*.capprof merged.capprof | tee diff.txt | grep -q "cpu self"
  ;;
paths)              # exact per-path counts in the default run (paths.c, paths.py)
  if ! python3 -c 'import os, sys
paranoid = int(open("/proc/sys/kernel/perf_event_paranoid").read())
sys.exit(0 if os.geteuid() == 0 or paranoid <= 2 else 1)' 2>/dev/null; then
    echo "SKIP: the kernel refuses perf_event_open here: no sampling, no unhooking"; exit 77
  fi
  flags=$("$capprof" cflags gcc)
  if [ "$flags" != "${flags#-pg}" ]; then                     # x86-64: GCC's recommended hooks
    # shellcheck disable=SC2086
    gcc -O2 -g -fno-optimize-sibling-calls $flags "$here/paths.c" \
      $("$capprof" ldflags --static) -o paths_gcc
    env -u CAPPROF_SAMPLE -u CAPPROF_UNHOOK -u CAPPROF_THROTTLE \
      CAPPROF_OUTPUT="$work/%n.%p.capprof" ./paths_gcc | grep -q '^ok$'
    python3 "$here/paths.py" "$capprof" paths_gcc.*.capprof both
  fi
  if command -v clang >/dev/null; then                         # Clang's after inlining
    clang -O2 -g -fno-optimize-sibling-calls $("$capprof" cflags clang) "$here/paths.c" \
      $("$capprof" ldflags --static) -o paths_clang
    env -u CAPPROF_SAMPLE -u CAPPROF_UNHOOK -u CAPPROF_THROTTLE \
      CAPPROF_OUTPUT="$work/%n.%p.capprof" ./paths_clang | grep -q '^ok$'
    python3 "$here/paths.py" "$capprof" paths_clang.*.capprof
  fi
  echo "ok: paths"
  ;;
unhook_split)       # f unhooked by thread A, then B's samples in f (unhook_split.c)
  if ! python3 -c 'import os, sys
paranoid = int(open("/proc/sys/kernel/perf_event_paranoid").read())
sys.exit(0 if os.geteuid() == 0 or paranoid <= 2 else 1)' 2>/dev/null; then
    echo "SKIP: the kernel refuses perf_event_open here: no sampling, no unhooking"; exit 77
  fi
  flags=$("$capprof" cflags gcc)
  if [ "$flags" = "${flags#-pg}" ]; then echo "SKIP: no unhooking on this target"; exit 77; fi
  # shellcheck disable=SC2086
  gcc -O2 -g -fno-optimize-sibling-calls $flags "$here/unhook_split.c" \
    $("$capprof" ldflags --static) -lpthread -o usplit
  env -u CAPPROF_SAMPLE -u CAPPROF_UNHOOK -u CAPPROF_THROTTLE \
    CAPPROF_OUTPUT="$work/%n.%p.capprof" ./usplit | grep -q '^ok '
  python3 "$here/unhook_split.py" "$capprof" usplit.*.capprof
  ;;
default)            # no CAPPROF_SAMPLE: hooked threads sampled through a ring buffer
  # Where this kernel does not let a program sample itself (perf_event_paranoid
  # above 2 without privilege), only the fallback is checked below.
  ring=yes
  if ! python3 -c 'import ctypes, os, sys
paranoid = int(open("/proc/sys/kernel/perf_event_paranoid").read())
sys.exit(0 if os.geteuid() == 0 or paranoid <= 2 else 1)' 2>/dev/null; then
    ring=no; echo "the kernel refuses perf_event_open here: ring checks skipped, fallback checked"
  fi
  for mode in cyg fentry; do
    if [ $mode = fentry ]; then
      flags=$("$capprof" cflags gcc)
      [ "$flags" != "${flags#-pg}" ] || continue                          # not x86-64
    else
      flags=-finstrument-functions
    fi
    # shellcheck disable=SC2086
    gcc -O2 -g -I"$src/include" $flags "$here/ring.c" $("$capprof" ldflags --static) -o ring_$mode
    [ $ring = yes ] || continue
    rm -f ./*.capprof
    env -u CAPPROF_SAMPLE CAPPROF_OUTPUT="$work/%n.%p.capprof" ./ring_$mode 1 > out.txt
    cat out.txt
    grep -q "^child ok" out.txt
    grep -q ": same$" out.txt || { echo "FAIL: the host saw a handler or a descriptor of capprof's"; exit 1; }
    parent=$(ls ring_$mode.*.capprof | head -n 1)
    for d in ring_$mode.*.capprof; do
      "$capprof" export --format=json "$d" | grep -q '"child_work"' && child=$d || parent=$d
    done
    check ring "$parent" "$child"
    # report sorts by the samples' CPU time: heavy first, as perf would say
    "$capprof" report "$parent" | tee report.txt
    awk '/function$/ { getline; exit !($NF ~ /ring.c/ && $(NF-1) == "heavy") }' report.txt \
      || { echo "FAIL: report does not name heavy first"; exit 1; }
    "$capprof" info "$parent" | grep -q "a ring buffer the hooks read"
  done
  if [ $ring = yes ]; then
    # No descriptor left: a thread's first hook keeps errno, a fork child ends
    rm -f ./*.capprof
    CAPPROF_OUTPUT="$work/%n.%p.capprof" ./ring_cyg 1 fdfull > out.txt
    cat out.txt
    grep -q "^fdfull: errno kept, fork child ok" out.txt
    "$capprof" info "$(ls -S ring_cyg.*.capprof | head -n 1)" | grep -q "got no sampling ring" ||
      { echo "FAIL: the dump does not say a thread got no ring"; exit 1; }
    # A profile object beside the default: a thread started later is sampled once
    rm -f ./*.capprof
    CAPPROF_OUTPUT="$work/%n.%p.capprof" ./ring_cyg 1 profile > out.txt
    for d in ring_cyg.*.capprof; do
      "$capprof" export --format=json "$d" | grep -q '"child_work"' || check ring_once "$d"
    done
  fi
  # Where the kernel refuses it: the hooks' compensated times, and the reason
  rm -f ./*.capprof
  [ -x ring_cyg ] || gcc -O2 -g -I"$src/include" -finstrument-functions "$here/ring.c" $("$capprof" ldflags --static) -o ring_cyg
  # (CAPPROF_SAMPLE=perf: the ring only; auto falls back to the timer, case timer)
  CAPPROF_SAMPLE=perf CAPPROF_SAMPLE_NO_PERF=1 CAPPROF_OUTPUT="$work/refused.%p.capprof" ./ring_cyg 1 > out.txt
  for d in refused.*.capprof; do
    check ring_refused "$d" CAPPROF_SAMPLE_NO_PERF
    "$capprof" report "$d" | tee report.txt | grep -q "sampling did not run: .*compensated"
    "$capprof" tree "$d" | grep -q "sampling did not run: .*compensated"
  done
  # Under a seccomp filter perf_event_open is never tried (a filter may kill for it)
  gcc -O2 -g -I"$src/include" -finstrument-functions "$here/ring.c" "$here/seccomp_allow.c" \
    $("$capprof" ldflags --static) -o ring_seccomp
  CAPPROF_SAMPLE=perf CAPPROF_OUTPUT="$work/seccomp.%p.capprof" ./ring_seccomp 1 > out.txt
  for d in seccomp.*.capprof; do check ring_refused "$d" seccomp; done
  # CAPPROF_SAMPLE=off: no sampling session at all
  CAPPROF_SAMPLE=off CAPPROF_OUTPUT="$work/off.%p.capprof" ./ring_cyg 1 > out.txt
  if "$capprof" info off.*.capprof | grep -q "^sampling:"; then
    echo "FAIL: CAPPROF_SAMPLE=off sampled"; exit 1
  fi
  ;;
timer)              # perf_event_open refused: the default samples with the CPU-time timer
  gcc -O2 -g -I"$src/include" -finstrument-functions "$here/ring.c" $("$capprof" ldflags --static) -o ring_cyg
  gcc -O2 "$src/bench/fidelity/noperf.c" -o noperf
  # refused by CAPPROF_SAMPLE_NO_PERF, by seccomp filters failing perf_event_open
  # with EPERM and with EACCES (as a container's), and asked for (CAPPROF_SAMPLE=timer)
  for how in env EPERM EACCES asked; do
    rm -f ./*.capprof
    case $how in
      env) CAPPROF_SAMPLE_NO_PERF=1 CAPPROF_OUTPUT="$work/%n.%p.capprof" ./ring_cyg 2 > out.txt
           why=CAPPROF_SAMPLE_NO_PERF ;;
      asked) CAPPROF_SAMPLE=timer CAPPROF_OUTPUT="$work/%n.%p.capprof" ./ring_cyg 2 > out.txt
             why="" ;;
      *) CAPPROF_OUTPUT="$work/%n.%p.capprof" ./noperf $how ./ring_cyg 2 > out.txt
         why=seccomp ;;
    esac
    cat out.txt
    grep -q "^child ok" out.txt
    for d in ring_cyg.*.capprof; do
      "$capprof" export --format=json "$d" | grep -q '"child_work"' && child=$d || parent=$d
    done
    check timer "$parent" "$child" "$why"
    "$capprof" info "$parent" | tee info.txt | grep -q "method: POSIX CPU-time timer"
    grep -q "Hz effective" info.txt
    "$capprof" report "$parent" | tee report.txt | grep -q "ranked by cpu (timer samples)"
  done
  ;;
sigreset)           # the program resets every signal in a loop: no death, recorded
  gcc -O2 -g -finstrument-functions "$here/sigreset.c" $("$capprof" ldflags --static) -o sigreset_static
  gcc -O2 -g -finstrument-functions "$here/sigreset.c" $("$capprof" ldflags) -o sigreset_shared
  for v in static shared; do
    rm -f ./*.capprof
    CAPPROF_SAMPLE=timer CAPPROF_OUTPUT="$work/%n.%p.capprof" ./sigreset_$v > out.txt
    grep -q "^alive" out.txt
    check host_took sigreset_$v.*.capprof
  done
  ;;
eintr)              # the calls a sample's signal may interrupt: the rate measured
  gcc -O2 -g -finstrument-functions "$here/eintr.c" $("$capprof" ldflags --static) -o eintr
  CAPPROF_SAMPLE=timer CAPPROF_OUTPUT="$work/%n.%p.capprof" ./eintr 300 | tee out.txt
  "$capprof" info eintr.*.capprof | tee info.txt | grep -q "fired [1-9][0-9]* times"
  ;;
ratio_timer)        # perf_event_open refused: the CPU-time timer takes over
  $plain "$here/spin3.c" -o spin3
  # Rounds of ~13 us: the timer fires on the tick, whose phase a 4 ms round
  # would lock to (the ratio then swung 1.3-4.9 from run to run).
  CAPPROF_SAMPLE_NO_PERF=1 $run --sample=time:100us -- ./spin3 100000 3000 > out.txt
  check ratio_timer spin3.*.capprof
  "$capprof" info spin3.*.capprof | grep -q "fell back to the CPU-time timer"
  ;;
waiter_worker)      # hooks: samples charged to the call paths
  gcc -O1 -g -finstrument-functions "$here/waiter_worker.c" "$build/libcapprof.a" \
    -lpthread -ldl -o ww
  CAPPROF_OUTPUT="$work/%n.%p.capprof" CAPPROF_SAMPLE=time:1ms ./ww > out.txt
  check waiter_worker ww.*.capprof
  "$capprof" tree ww.*.capprof | tee tree.txt | grep -q "cpu incl%"
  exports ww.*.capprof
  "$capprof" merge -o merged.capprof ww.*.capprof ww.*.capprof
  python3 - "$capprof" ww.*.capprof merged.capprof <<'PY'
import json, subprocess, sys
def worker(d):
    doc = json.loads(subprocess.run([sys.argv[1], "export", "--format=json", d], check=True,
                                    capture_output=True, text=True).stdout)
    return next(f["samples"] for f in doc["functions"] if f["name"] == "worker")
one, two = worker(sys.argv[2]), worker(sys.argv[3])
print("worker samples: one run", one, "merged twice", two)
sys.exit(0 if two == 2 * one and one > 0 else 1)
PY
  ;;
probe)              # hooks: samples in capprof's hooks are counted apart
  # The static runtime with each compiler mode, and libcapprof.so. The default
  # settings (throttling on): tiny() is throttled, and compensation
  # charges it most of with_calls' work (the ordered clock read of its timed
  # calls waits for the multiply chain); the samples put the work where it is.
  # Unhooking is off: it would patch tiny's hooks out (case unhook).
  for mode in gcc clang fentry shared; do
    case $mode in
      fentry) cc=gcc flags=$("$capprof" cflags gcc) libs=$("$capprof" ldflags --static) ;;
      shared) cc=gcc flags=-finstrument-functions                 # hooks in libcapprof.so
              libs="-L$build -lcapprof -Wl,-rpath,$build" ;;
      *) cc=$mode flags=-finstrument-functions libs="$build/libcapprof.a -lpthread -ldl" ;;
    esac
    command -v $cc >/dev/null || continue
    [ "$mode" != fentry ] || [ "$flags" != "${flags#-pg}" ] || continue   # not x86-64
    # shellcheck disable=SC2086
    $cc -O2 -g $flags "$here/probe.c" $libs -o probe_$mode
    CAPPROF_OUTPUT="$work/%n.%p.capprof" CAPPROF_SAMPLE=time:100us CAPPROF_UNHOOK=off \
      ./probe_$mode 20 > out.txt
    check probe probe_$mode.*.capprof
    "$capprof" report --sort=cpu probe_$mode.*.capprof | tee report.txt
    grep -q "^ranked by cpu (.*): .* in hooks" report.txt
    "$capprof" tree probe_$mode.*.capprof | grep -q "^ranked by cpu (.*): .* in hooks"
    "$capprof" merge -o merged_$mode.capprof probe_$mode.*.capprof
    check probe merged_$mode.capprof
  done
  ;;
prologue)           # a callee's prologue runs before its entry hook: charged to it by pc
  for cc in gcc clang; do
    command -v $cc >/dev/null || continue
    $cc -O2 -g -finstrument-functions -fstack-clash-protection "$here/prologue.c" \
      "$build/libcapprof.a" -lpthread -ldl -o prologue_$cc
    CAPPROF_OUTPUT="$work/%n.%p.capprof" CAPPROF_SAMPLE=time:100us ./prologue_$cc 40 > out.txt
    check prologue prologue_$cc.*.capprof
    "$capprof" merge -o merged_$cc.capprof prologue_$cc.*.capprof
    check prologue merged_$cc.capprof
  done
  ;;
unhook)             # the hooks of frequent short functions patched out (GCC fentry, Clang)
  command -v gcc >/dev/null || exit 0
  [ -f "$build/libcapprof.a" ] && "$capprof" cflags gcc | grep -q mfentry || exit 0
  # shellcheck disable=SC2046
  gcc -O2 -g -fno-optimize-sibling-calls $("$capprof" cflags gcc) "$here/unhook.c" \
    $("$capprof" ldflags --static) -o unhook_gcc
  # sampling on: unhooked (CAPPROF_UNHOOK=auto)
  CAPPROF_OUTPUT="$work/on.capprof" CAPPROF_SAMPLE=time:100us ./unhook_gcc 2 > on.txt
  cat on.txt
  "$capprof" report on.capprof > on.report
  check unhook on.capprof on.txt on.report
  "$capprof" tree on.capprof | grep -q '\[unhooked\]'
  "$capprof" info on.capprof | grep -q '^unhooked: .* functions, their hook calls patched out'
  check unhook_filters on.capprof on.txt
  "$capprof" merge -o merged.capprof on.capprof
  "$capprof" report merged.capprof > merged.report
  check unhook merged.capprof on.txt merged.report
  # under a seccomp filter (one that allows everything: the runtime cannot
  # tell it from one that kills), nothing is patched
  # shellcheck disable=SC2046
  gcc -O2 -g -fno-optimize-sibling-calls $("$capprof" cflags gcc) "$here/unhook.c" \
    "$here/seccomp_allow.c" $("$capprof" ldflags --static) -o unhook_seccomp
  CAPPROF_OUTPUT="$work/filtered.capprof" CAPPROF_SAMPLE=time:100us ./unhook_seccomp 1 > filtered.txt
  grep -q 'checksum ok' filtered.txt
  "$capprof" report filtered.capprof > filtered.report
  if grep -q '\[unhooked\]' filtered.report; then echo "FAIL: patched under a seccomp filter"; exit 1; fi
  # unhooking off, and sampling off: every call counted
  CAPPROF_OUTPUT="$work/off.capprof" CAPPROF_SAMPLE=time:100us CAPPROF_UNHOOK=off ./unhook_gcc 1 > off.txt
  "$capprof" report off.capprof > off.report
  check unhook_off off.capprof off.txt off.report
  CAPPROF_OUTPUT="$work/nosample.capprof" CAPPROF_SAMPLE=off ./unhook_gcc 1 > nosample.txt
  "$capprof" report nosample.capprof > nosample.report
  if grep -q unhooked nosample.report; then echo "FAIL: unhooked without sampling"; exit 1; fi
  # without sampling, throttling takes leaves only: not hub, which calls slow
  if sed -n '/^\[throttled\]:/,/^$/p' nosample.report | grep -q '^  hub:'; then
    echo "FAIL: hub, a caller, throttled without sampling"; exit 1
  fi
  sed -n '/^\[throttled\]:/,/^$/p' nosample.report | grep -q '^  leaf:' ||
    { echo "FAIL: nothing throttled without sampling (the check above proves nothing)"; exit 1; }
  # Clang's __cyg_profile_func_* hooks after inlining: entry sites learnt too
  if command -v clang >/dev/null; then
    clang -O2 -g -fno-optimize-sibling-calls -finstrument-functions-after-inlining \
      "$here/unhook.c" "$build/libcapprof.a" -lpthread -ldl -o unhook_clang
    CAPPROF_OUTPUT="$work/clang.capprof" CAPPROF_SAMPLE=time:100us ./unhook_clang 2 > clang.txt
    cat clang.txt
    "$capprof" report clang.capprof > clang.report
    check unhook clang.capprof clang.txt clang.report
  fi
  # the runtime as a shared library (capprof ldflags): its own counting
  # stubs are out of reach of the program's code, so unhooking writes them
  # near it; the counts must stay exact
  gcc -O2 -g -fno-optimize-sibling-calls $("$capprof" cflags gcc) "$here/unhook.c" \
    $("$capprof" ldflags) -o unhook_so
  CAPPROF_OUTPUT="$work/so.capprof" CAPPROF_SAMPLE=time:100us ./unhook_so 1 > so.txt
  "$capprof" report so.capprof > so.report
  check unhook so.capprof so.txt so.report
  # samples in those stubs are named as the runtime's own stubs, not by
  # their anonymous mapping's addresses (issue 36: hex entries in the JSON)
  "$capprof" export --format=json so.capprof | python3 -c 'import json, re, sys
hex = [f["name"] for f in json.load(sys.stdin)["functions"] if re.match(r"0x[0-9a-f]+$", f["name"])]
sys.exit("FAIL: functions named by bare addresses: %s" % hex[:8] if hex else 0)'
  ;;
unhook_edges)       # unhooking's edge cases, each once crashed the host
  command -v gcc >/dev/null || exit 0
  "$capprof" cflags gcc | grep -q mfentry || exit 0
  # a cascade to a caller with one completed call (CAPPROF_THROTTLE=1)
  # shellcheck disable=SC2046
  gcc -O2 -g -fno-optimize-sibling-calls $("$capprof" cflags gcc) "$here/unhook_once.c" \
    $("$capprof" ldflags --static) -o once
  CAPPROF_OUTPUT="$work/once.capprof" CAPPROF_THROTTLE=1 CAPPROF_SAMPLE=time:100us ./once > once.txt
  grep -q '^ok ' once.txt
  "$capprof" info once.capprof > /dev/null
  # an exit hook reached by a tail jump, from an indirect call with e8 before it
  gcc -O2 -g -finstrument-functions -c "$here/unhook_tail.c" -o tail.o
  gcc -O2 -c "$here/unhook_tail_main.c" -o tail_main.o
  gcc -c "$here/unhook_tail_caller.S" -o tail_caller.o
  gcc tail_main.o tail.o tail_caller.o "$build/libcapprof.a" -lpthread -ldl -o tail
  CAPPROF_OUTPUT="$work/tail.capprof" CAPPROF_SAMPLE=time:100us ./tail > tail.txt
  grep -q '^ok 300000$' tail.txt
  "$capprof" report tail.capprof > tail.report
  if grep -q '\[unhooked\]' tail.report; then echo "FAIL: v unhooked, its exit is a tail jump"; exit 1; fi
  # a recursion always four calls deep: unhooked from its outermost call only
  gcc -O2 -g -fno-optimize-sibling-calls $("$capprof" cflags gcc) "$here/unhook_deeprec.c" \
    $("$capprof" ldflags --static) -o deeprec_gcc
  set -- gcc
  if command -v clang >/dev/null; then
    clang -O2 -g -fno-optimize-sibling-calls -finstrument-functions-after-inlining \
      "$here/unhook_deeprec.c" "$build/libcapprof.a" -lpthread -ldl -o deeprec_clang
    set -- gcc clang
  fi
  for cc in "$@"; do
    CAPPROF_OUTPUT="$work/deeprec_$cc.capprof" CAPPROF_SAMPLE=time:100us ./deeprec_$cc 1 > deeprec.txt
    grep -q '^ok ' deeprec.txt
    "$capprof" report deeprec_$cc.capprof > deeprec.report
    check deeprec deeprec_$cc.capprof deeprec.report
  done
  # an unhooked function's calls counted exactly in threads that ended and
  # threads alive at exit, unhooked while they call it
  gcc -O2 -g -fno-optimize-sibling-calls $("$capprof" cflags gcc) "$here/unhook_threads.c" \
    $("$capprof" ldflags --static) -lpthread -o uthreads
  CAPPROF_OUTPUT="$work/uthreads.capprof" CAPPROF_SAMPLE=time:100us ./uthreads > uthreads.txt
  check unhook_threads uthreads.capprof uthreads.txt
  # ... across capprof_reset (a thread inside one call across it counts its
  # calls after only) and in a thread with no state of its own
  gcc -O2 -g -fno-optimize-sibling-calls $("$capprof" cflags gcc) -I"$here/../../include" \
    "$here/unhook_reset.c" $("$capprof" ldflags --static) -lpthread -o ureset
  CAPPROF_OUTPUT="$work/ureset.capprof" CAPPROF_SAMPLE=time:100us ./ureset > ureset.txt
  check unhook_threads ureset.capprof ureset.txt
  echo "ok: unhook_edges"
  ;;
threads8)
  $plain "$here/threads8.c" -o threads8 -lpthread
  $preload CAPPROF_SAMPLE=time:1ms ./threads8 > out.txt
  check threads8 threads8.*.capprof
  ;;
threads8_hooked)    # with hooks, static runtime: each thread's first hook opens its events
  gcc -O1 -g -finstrument-functions "$here/threads8.c" "$build/libcapprof.a" -lpthread -ldl \
    -o threads8
  CAPPROF_OUTPUT="$work/%n.%p.capprof" CAPPROF_SAMPLE=time:1ms ./threads8 > out.txt
  check threads8 threads8.*.capprof
  ;;
fork)
  $plain "$here/forker.c" -o forker
  $run --sample -- ./forker > out.txt
  # shellcheck disable=SC2046
  check fork $(ls forker.*.capprof)
  ;;
signals)
  $plain "$here/signals.c" -o signals -lpthread
  $run --sample=time:200us -- ./signals > out.txt || { cat out.txt; exit 1; }
  cat out.txt
  check signals signals.*.capprof
  ;;
hw_unavailable)     # no hardware counters here: one clear line, a dump that says so
  $plain "$here/spin3.c" -o spin3
  $run --sample=cycles -- ./spin3 2 > out.txt 2> err.txt
  cat err.txt
  [ "$(wc -l < err.txt)" -eq 1 ] || { echo "want exactly one line on stderr"; exit 1; }
  grep -q "sampling source 'cycles' is not available here" err.txt
  grep -q "available sources: time task-clock cpu-clock cpu-timer" err.txt
  if "$capprof" report --samples spin3.*.capprof > rep.txt 2>&1; then
    echo "report --samples should fail on a dump whose sampling did not run"; exit 1
  fi
  cat rep.txt
  grep -q "sampling did not run: sampling source 'cycles' is not available" rep.txt
  ;;
existing)           # threads running before a profile object starts are sampled
  gcc -O2 -g -I"$src/include" "$here/existing.c" "$build/libcapprof.a" -lpthread -ldl -o existing
  CAPPROF_OUTPUT="$work/%n.%p.capprof" ./existing
  ;;
selfprofile)        # examples/selfprofile.c: a profile object over its own sort
  CAPPROF_OUTPUT="$work/%n.%p.capprof" "$build/examples/selfprofile" --check | tee out.txt
  "$capprof" info selfprofile.*.capprof | tee info.txt | grep -A2 "^sampling:"
  grep -q 'profile object "insertion sort": task-clock every 100 us' info.txt
  ;;
*)
  echo "unknown case $case"; exit 2
  ;;
esac
echo "ok: sample.$case"
