#!/bin/sh
# literals_check.sh SRC -- no string literal in the runtime (src/) names a
# variable of src/core/settings.def: the runtime reads and names them through the
# table (settings_str, settings_name...), so that the table is the whole list.
set -u
SRC=$1
names=$(sed -n 's/^SETTING(\([A-Z0-9_]*\),.*/\1/p' "$SRC/src/core/settings.def" | paste -sd'|' -)
[ -n "$names" ] || { echo "no SETTING lines in src/core/settings.def"; exit 1; }
# A quoted span holding CAPPROF_<name> (the prefix alone, "CAPPROF_", is the
# table's own business).
hits=$(cd "$SRC" && grep -rnE "\"[^\"]*CAPPROF_($names)([^A-Z0-9_][^\"]*)?\"" src \
         --include='*.c' --include='*.h' --include='*.S' --include='*.asm' --include='*.inc')
if [ -n "$hits" ]; then
  echo "$hits"
  echo "FAIL: CAPPROF_* variable names in string literals outside src/core/settings.def"
  exit 1
fi
echo "ok: no variable name spelt in src/ outside src/core/settings.def"
