#!/bin/sh
# deps.sh OBJECT... -- the runtime's dependencies run one way: features ->
# core -> OS layer (docs/internals.md, "Layout"). Reads every runtime object
# given (CTest passes the capprof_objs target's; $NM picks nm), maps it to its folder
# (src/<folder>/, asm/ by file), takes the symbols it defines and the ones it
# leaves undefined (nm), and fails on:
#   - any reference from the OS layer (src/posix/os*, src/win/os*) to another folder;
#   - any reference from the core (src/core/) into a feature;
#   - any reference between two features that the ALLOWED table below lacks.
# Features register with the core through the tables of src/features.c
# (struct cp_feature): the core (and the dump writer, for the order of the
# sections) may read them, though they name every feature.
# Includes alone do not show calls: the objects do. Symbols no object
# defines (libc, pthreads, Win32) are left out.
set -eu
nm=${NM:-nm}

# Feature -> feature edges that are part of the design, one "from:to" each.
ALLOWED="
hooks:intercept
hooks:patch
hooks:sample
hooks:throttle
hooks:zone
intercept:dump
intercept:sample
patch:dump
patch:hooks
patch:throttle
sample:dump
sample:patch
throttle:dump
throttle:patch
throttle:sample
zone:dump
zone:sample
"
folder() {                        # object path -> layer/feature name
  case $1 in
    */src/posix/os*|*/src/win/os*) echo os ;;
    */src/core/*) echo core ;;
    */src/features.c*) echo table ;;
    */src/*/*) f=${1#*/src/}; echo "${f%%/*}" ;;
    */asm/fentry_*) echo hooks ;;
    */asm/penter_*) echo hooks ;;
    */asm/tramp_*|*/asm/intercept_*) echo intercept ;;
    *) echo "deps.sh: no folder for $1" >&2; exit 2 ;;
  esac
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ $# -gt 0 ] || { echo "usage: deps.sh OBJECT..." >&2; exit 2; }
for o in "$@"; do
  f=$(folder "$o")
  "$nm" "$o" | awk -v f="$f" -v o="${o##*.dir/}" '
    $1 == "U" { print "U", f, $2, o; next }
    NF >= 3 && $2 ~ /^[TDBRCVWGS]$/ { print "D", f, $3, o }' >>"$tmp/syms"
done
# def: symbol -> folder; refs from another folder
awk '$1 == "D" { def[$3] = $2 } $1 == "U" { u[NR] = $0 }
     END { for (i in u) { split(u[i], a, " "); if ((a[3] in def) && def[a[3]] != a[2])
             print a[2], def[a[3]], a[3], a[4] } }' "$tmp/syms" | sort -u >"$tmp/edges"

bad=0
while read -r from to sym obj; do
  case $from:$to in
    os:*) why="the OS layer calls up" ;;
    core:os|*:table|table:*) continue ;;      # the feature tables: anyone may walk them
    core:*) why="the core calls into a feature" ;;
    *:core|*:os) continue ;;
    *) if printf '%s\n' $ALLOWED | grep -qx "$from:$to"; then continue; fi
       why="feature edge not in ALLOWED" ;;
  esac
  echo "deps.sh: $obj ($from) -> $sym ($to): $why"
  bad=1
done <"$tmp/edges"
n=$(awk '{print $1":"$2}' "$tmp/edges" | sort -u | tr '\n' ' ')
if [ $bad = 0 ]; then echo "deps.sh: $# objects; folder edges: $n; none upward"; fi
exit $bad
