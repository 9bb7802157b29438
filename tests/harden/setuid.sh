#!/bin/sh
# setuid.sh BUILD SRC CC -- a setuid-root program run by nobody ignores the
# caller's CAPPROF_OUTPUT/CAPPROF_OUTPUT_DIR (writes nothing at exit), and a
# dump it asks for is mode 0600. The same binary without the setuid bit is
# the control: there the variables are obeyed. Needs root (skipped, code 77,
# otherwise).
set -eu
build=$1 src=$2 cc=$3
san=$(cat "$build/sanitize-flags" 2>/dev/null || true)   # a sanitized build
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to make a setuid-root binary"; exit 77; }
work=$(mktemp -d /tmp/capprof-setuid.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
"$cc" $san -O1 -finstrument-functions -I"$src/include" "$src/tests/harden/setuid_prog.c" \
  "$build/libcapprof.a" -lpthread -ldl -o "$work/prog"
mkdir "$work/rootonly" "$work/open"
chmod 700 "$work/rootonly"; chmod 1777 "$work/open"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }
fail=0

# Control: not setuid, run by nobody: the variable is obeyed.
chmod 755 "$work/prog"
(cd "$work/open" && as_nobody env CAPPROF_OUTPUT="$work/open/control.capprof" "$work/prog" >/dev/null)
[ -f "$work/open/control.capprof" ] || { echo "control: CAPPROF_OUTPUT not obeyed"; fail=1; }
rm -f "$work/open/"*

# setuid root: nothing written, neither where the caller pointed nor in cwd.
chown root:root "$work/prog"; chmod 4755 "$work/prog"
out=$(cd "$work/open" && as_nobody env CAPPROF_OUTPUT="$work/rootonly/planted.%p.capprof" \
      CAPPROF_OUTPUT_DIR="$work/rootonly" CAPPROF_VERBOSE=1 "$work/prog" 2>&1)
[ "$out" = "ok 5050" ] || { echo "setuid run printed: $out"; fail=1; }
if [ -n "$(ls -A "$work/rootonly")" ] || [ -n "$(ls -A "$work/open")" ]; then
  echo "setuid run wrote files:"; ls -l "$work/rootonly" "$work/open"; fail=1
fi

# setuid root, the program asks: written, mode 0600.
out=$(cd "$work/open" && as_nobody "$work/prog" dump "$work/open/asked.capprof" 2>&1)
[ "$out" = "ok 5050" ] || { echo "asked dump: $out"; fail=1; }
mode=$(stat -c %a "$work/open/asked.capprof" 2>/dev/null || echo none)
[ "$mode" = 600 ] || { echo "asked dump mode: $mode (want 600)"; fail=1; }
"$build/capprof" info "$work/open/asked.capprof" >/dev/null || fail=1
[ $fail = 0 ] && echo "ok: setuid"
exit $fail
