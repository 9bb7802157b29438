#!/bin/sh
# probe_note.sh CAPPROF GEN_DUMP WORKDIR -- 'capprof report' says how much of
# a run's measured time was the hooks' own when that is most of it (over
# half), and nothing on a run where it is not, nor with --raw.
set -eu
CAPPROF=$1 GEN=$2 W=$3
rm -rf "$W" && mkdir -p "$W" && cd "$W"
fail() { echo "probe_note.sh: $*" >&2; exit 1; }
"$GEN" probe.capprof probe
"$GEN" small.capprof small
"$CAPPROF" report probe.capprof > probe.txt
sed -n 2p probe.txt | grep -q '^ranked by elapsed: 76.9% of the 2.60 ms measured was probe cost' ||
  fail "no probe note on a run that was 77 % probe: $(cat probe.txt)"
"$CAPPROF" report --raw probe.capprof > raw.txt
! grep -q 'was probe cost' raw.txt || fail "probe note with --raw"
"$CAPPROF" report small.capprof > small.txt
! grep -q 'was probe cost' small.txt || fail "probe note on a run that was not mostly probe"
echo "probe_note.sh: ok"
