#!/bin/sh
# docs_check.sh SRC -- the variable tables of docs/runtime.md (## Environment)
# and docs/man/capprof.1 (.SH ENVIRONMENT) name exactly the variables of
# src/core/settings.def: each one documented, none documented that the table lacks.
# runtime.md lists what the runtime reads (no TOOL entries); the man page
# lists them all.
set -eu
SRC=$1
T=${TMPDIR:-/tmp}/capprof-docs-check.$$
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT

sed -n 's/^SETTING(\([A-Z0-9_]*\), *\([A-Z0-9]*\),.*/CAPPROF_\1 \2/p' "$SRC/src/core/settings.def" >"$T/def"
[ -s "$T/def" ] || { echo "no SETTING lines in src/core/settings.def"; exit 1; }
awk '$2 != "TOOL" { print $1 }' "$T/def" | sort -u >"$T/runtime"
awk '{ print $1 }' "$T/def" | sort -u >"$T/all"

# runtime.md: the rows "| `CAPPROF_X` | ..." of the section "## Environment".
awk '/^## /{ on = ($0 == "## Environment") } on' "$SRC/docs/runtime.md" |
  sed -n 's/^| `\(CAPPROF_[A-Z0-9_]*\)` |.*/\1/p' | sort -u >"$T/md"
# capprof.1: the names set in bold (.B or .BR) in the ENVIRONMENT section.
awk '/^\.SH /{ on = ($0 == ".SH ENVIRONMENT") } on' "$SRC/docs/man/capprof.1" |
  sed -n 's/^\.BR\{0,1\} \(CAPPROF_[A-Z0-9_][A-Z0-9_]*\).*/\1/p' | sort -u >"$T/man"

status=0
check() {   # check WANT GOT WHERE
  for v in $(comm -23 "$1" "$2"); do echo "$v: in src/core/settings.def, not in $3"; status=1; done
  for v in $(comm -13 "$1" "$2"); do echo "$v: in $3, not in src/core/settings.def"; status=1; done
}
check "$T/runtime" "$T/md" "docs/runtime.md's Environment table"
check "$T/all" "$T/man" "docs/man/capprof.1's ENVIRONMENT section"
[ "$status" = 0 ] && echo "$(wc -l <"$T/all") variables: docs/runtime.md ($(wc -l <"$T/md")) and capprof.1 ($(wc -l <"$T/man")) agree with src/core/settings.def"
exit $status
