#!/bin/sh
# deps.sh OBJECT... -- the runtime's dependencies run one way: features ->
# core -> OS layer (docs/internals.md, "Layout"). Reads every runtime object
# given (CTest passes the capprof_objs target's; $NM picks nm), maps it to its folder
# (src/<folder>/, asm/ by file), takes the symbols it defines and the ones it
# leaves undefined (nm), and fails on:
#   - any reference from the OS layer (src/posix/os*, src/win/os*) to another folder;
#   - any reference from the core (src/core/) into a feature;
#   - any reference between two features that the ALLOWED table below lacks.
# Features register with the core through the table of src/features.c
# (struct cp_feature): the core may read that table, which names them all.
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
intercept:sample
patch:hooks
patch:throttle
sample:dump
sample:patch
throttle:patch
throttle:sample
zone:sample
"
# Upward references not yet turned into registrations, one "from:symbol"
# each: this list only shrinks (issue 34). Anything else upward fails.
PENDING="
dump:intercept_count
dump:intercept_name
dump:intercept_skip_count
dump:intercept_skip_get
dump:intercept_summary
dump:throttle_records
dump:throttle_settings
dump:unhook_calls
dump:unhook_flags
dump:unhook_records
dump:zone_issues
dump:zone_name
dump:zone_name_count
core:__cyg_profile_func_enter
core:__cyg_profile_func_exit
core:cp_calib_fentry
core:dump_failure
core:dump_write
core:intercept_start
core:os_dumpsig_start
core:sample_finish
core:sample_init_from_env
core:throttle_init
core:throttle_settle
core:zone_add
core:zone_issues
core:zone_note
dump:sample_write_sections
os:cp_g
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
  if printf '%s\n' $PENDING | grep -qx "$from:$sym"; then continue; fi
  case $from:$to in
    os:*) why="the OS layer calls up" ;;
    core:os|core:table|table:*) continue ;;   # the core walks the feature table
    core:*) why="the core calls into a feature" ;;
    *:core|*:os) continue ;;
    *) if printf '%s\n' $ALLOWED | grep -qx "$from:$to"; then continue; fi
       why="feature edge not in ALLOWED" ;;
  esac
  echo "deps.sh: $obj ($from) -> $sym ($to): $why"
  bad=1
done <"$tmp/edges"
# A PENDING entry no longer true must go, so that the list only shrinks.
for e in $PENDING; do
  awk -v f="${e%%:*}" -v s="${e#*:}" '$1 == f && $3 == s { found = 1 } END { exit !found }' \
    "$tmp/edges" || { echo "deps.sh: PENDING $e no longer occurs: remove it"; bad=1; }
done
n=$(awk '{print $1":"$2}' "$tmp/edges" | sort -u | tr '\n' ' ')
p=$(printf '%s\n' $PENDING | grep -c . || true)
if [ $bad = 0 ]; then echo "deps.sh: $# objects; folder edges: $n; none new upward ($p pending)"; fi
exit $bad
