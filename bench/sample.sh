#!/bin/sh
# sample.sh BUILD [ROUNDS] -- the costs of sampling (docs/performance.md):
#   1. the handler's own work per sample (bench_sample_cost: sample_hit in a
#      loop) and the whole cost of one sample to the sampled thread (signal
#      delivery included): CPU time of a plain workload sampled every 50 us,
#      minus unsampled, divided by the samples;
#   2. the slowdown of a program without hooks sampled at 1 kHz;
#   3. the hooks' cost per call with and without sampling at 1 kHz;
#   4. for reference, 'perf record -e task-clock' at the same 50 us period
#      (when perf is installed), and the cpu-timer source at 1 kHz.
# Every figure is the minimum over ROUNDS processes (default 5), the runs
# with and without sampling interleaved, so both see the same machine load.
set -eu
B=$1 ROUNDS=${2:-5}
W=$B/bench
PRE="env LD_PRELOAD=$B/libcapprof.so CAPPROF_OUTPUT=/dev/null/x"
D=22 R=5                      # (a) recursion: 8.4 million calls per repetition

kv() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
min() { if [ -z "$1" ] || [ "$(echo "$2 < $1" | bc -l)" = 1 ]; then echo "$2"; else echo "$1"; fi; }
calc() { echo "scale=${2:-2}; $1" | bc -l; }

"$W/bench_sample_cost" > /tmp/sample_cost.$$ || { cat /tmp/sample_cost.$$; exit 1; }
cost=$(cat /tmp/sample_cost.$$)
rm -f /tmp/sample_cost.$$
hp=$(kv "$cost" handler_process_ns) ho=$(kv "$cost" handler_object_ns)

base= s1k= s50= t1k= perf50= cap= capS= calls=
for r in $(seq "$ROUNDS"); do
  o=$($PRE "$W/wl_plain" rec $D $R 2>/dev/null); base=$(min "$base" "$(kv "$o" plain_ns)")
  o=$($PRE CAPPROF_SAMPLE=time:1ms "$W/wl_plain" rec $D $R 2>/dev/null)
  s1k=$(min "$s1k" "$(kv "$o" plain_ns)")
  o=$($PRE CAPPROF_SAMPLE=time:50us "$W/wl_plain" rec $D $R 2>/dev/null)
  s50=$(min "$s50" "$(kv "$o" plain_ns)")
  o=$($PRE CAPPROF_SAMPLE=cpu-timer:1ms "$W/wl_plain" rec $D $R 2>/dev/null)
  t1k=$(min "$t1k" "$(kv "$o" plain_ns)")
  if command -v perf >/dev/null 2>&1; then
    o=$(perf record -q -o /tmp/sample-perf.$$ -e task-clock -c 50000 "$W/wl_plain" rec $D $R \
        2>/dev/null) && perf50=$(min "$perf50" "$(kv "$o" plain_ns)")
    rm -f /tmp/sample-perf.$$
  fi
  o=$(CAPPROF_OUTPUT=/dev/null/x "$W/wl_cap" rec $D $R 2>/dev/null); calls=$(kv "$o" calls)
  cap=$(min "$cap" "$(calc "($(kv "$o" inst_ns) - $(kv "$o" plain_ns)) / $calls" 3)")
  o=$(CAPPROF_OUTPUT=/dev/null/x CAPPROF_SAMPLE=time:1ms "$W/wl_cap" rec $D $R 2>/dev/null)
  capS=$(min "$capS" "$(calc "($(kv "$o" inst_ns) - $(kv "$o" plain_ns)) / $calls" 3)")
done
per=$(calc "($s50 - $base) / ($s50 / 50000)" 0)
echo "sampling costs ($ROUNDS rounds, minima; workload (a) rec depth $D, $calls calls per repetition)"
echo "  handler's work per sample (sample_hit): process-wide ${hp} ns (12-frame walk, record, charge), profile object ${ho} ns"
echo "  one sample in all (signal delivery + handler), 50 us interval: ${per} ns of the sampled thread's CPU"
[ -n "$perf50" ] && echo "  the same under 'perf record -e task-clock -c 50000': $(calc "($perf50 - $base) / ($perf50 / 50000)" 0) ns per sample"
echo "  program without hooks at 1 kHz: $(calc "$s1k / $base" 4) x unsampled ($(calc "($s1k / $base - 1) * 100" 2)% slower)"
echo "  the same with the cpu-timer source (samples at the scheduler tick): $(calc "($t1k / $base - 1) * 100" 2)% slower"
echo "  hooks per call: ${cap} ns unsampled, ${capS} ns sampled at 1 kHz (change $(calc "$capS - $cap" 3) ns)"
