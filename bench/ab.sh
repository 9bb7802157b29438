#!/usr/bin/env bash
# bench/ab.sh -- two builds of capprof, A and B, compared on the call-heavy
# recursion of bench/run.sh's row (a): each build's bench/wl_cap (linked
# with that build's libcapprof.a), run interleaved, A then B, ROUNDS times,
# with the default settings, CAPPROF_SAMPLE=off, and CAPPROF_SAMPLE=off
# CAPPROF_THROTTLE=off. Prints, per mode and build, the minimum overhead
# per call, the minimum rdtsc-pair floor measured in the same processes,
# their ratio, and B's ratio against A's. For a change meant to leave the
# hooks' cost alone (a move, a header split): B within +-3 % of A.
#
#   bench/ab.sh A_BUILD B_BUILD [ROUNDS]   (default 12 rounds; ~30 s)
set -euo pipefail
a=$1 b=$2 rounds=${3:-12}
for d in "$a" "$b"; do
  [ -x "$d/bench/wl_cap" ] || { echo "ab.sh: $d/bench/wl_cap missing: build it first" >&2; exit 2; }
done
tmp=$(mktemp -d /tmp/capprof-ab.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export CAPPROF_OUTPUT="$tmp/%n.%p.capprof"
modes=(default off all)
menv() { case $1 in default) ;; off) echo CAPPROF_SAMPLE=off ;;
                     all) echo CAPPROF_SAMPLE=off CAPPROF_THROTTLE=off ;; esac; }
declare -A best
keep() { if [ -z "${best[$1]:-}" ] || awk "BEGIN{exit !($2 < ${best[$1]})}"; then best[$1]=$2; fi; }
for ((r = 0; r < rounds; r++)); do
  for m in "${modes[@]}"; do
    for side in A B; do
      d=$a; [ $side = B ] && d=$b
      # shellcheck disable=SC2046
      out=$(env $(menv $m) "$d/bench/wl_cap" rec 20 3)
      for k in ov_ns floor_pair_ns; do
        keep "$side.$m.$k" "$(sed -n "s/.* $k=\\([0-9.]*\\).*/\\1/p" <<<"$out")"
      done
      rm -f "$tmp"/*.capprof
    done
  done
done
echo "bench/ab.sh: wl rec 20 3, minima over $rounds interleaved rounds; A=$a B=$b"
printf '%-8s %-4s %12s %12s %10s %10s\n' mode side "ns/call" "floor ns" "ratio" "B vs A"
for m in "${modes[@]}"; do
  ra=$(awk "BEGIN{print ${best[A.$m.ov_ns]} / ${best[A.$m.floor_pair_ns]}}")
  for side in A B; do
    r=$(awk "BEGIN{print ${best[$side.$m.ov_ns]} / ${best[$side.$m.floor_pair_ns]}}")
    d=$(awk "BEGIN{printf \"%+.1f %%\", ($r / $ra - 1) * 100}")
    [ $side = A ] && d=-
    printf '%-8s %-4s %12s %12s %10.3f %10s\n' "$m" "$side" "${best[$side.$m.ov_ns]}" \
      "${best[$side.$m.floor_pair_ns]}" "$r" "$d"
  done
done
