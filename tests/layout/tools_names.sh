#!/bin/sh
# tools_names.sh SRC_DIR -- the tool's layout (issue 34): only capprof.c and
# CMakeLists.txt sit at tools/ top (everything else in a folder by role), and
# no file under tools/ shares its name with a runtime file under src/ or asm/,
# wherever in those trees it lives. Names are compared without case, '_' and
# '-', so dumpwrite.c and dump_write.c count as the same name.
# Exit 0 when the layout holds; 1 with one line per offending file.
set -eu
export LC_ALL=C
SRC=${1:?usage: tools_names.sh SRC_DIR}
cd "$SRC"
[ -d tools ] && [ -d src ] || { echo "tools_names: $SRC has no tools/ or src/"; exit 1; }
status=0

for f in tools/* tools/.[!.]*; do
  [ -e "$f" ] || [ -L "$f" ] || continue
  [ -d "$f" ] && [ ! -L "$f" ] && continue
  case ${f#tools/} in
    capprof.c|CMakeLists.txt) ;;
    *) echo "tools_names: $f sits at tools/ top: move it into a folder by role"; status=1 ;;
  esac
done

# One line per file: its compared key, a tab, its path.
keys() { find "$@" -type f | while IFS= read -r p; do
  b=${p##*/}; printf '%s\t%s\n' "$(printf '%s' "$b" | tr 'A-Z' 'a-z' | tr -d '_-')" "$p"; done; }
runtime=$(mktemp) tool=$(mktemp)
trap 'rm -f "$runtime" "$tool"' EXIT
keys src $( [ -d asm ] && echo asm) | sort >"$runtime"
keys tools | sort >"$tool"
[ -s "$runtime" ] && [ -s "$tool" ] || { echo "tools_names: no files found"; exit 1; }
clash=$(join -t "$(printf '\t')" "$tool" "$runtime" | cut -f2,3)
if [ -n "$clash" ]; then
  printf '%s\n' "$clash" | while IFS="$(printf '\t')" read -r t r; do
    echo "tools_names: $t has the name of the runtime's $r: name it for what it does"
  done
  status=1
fi
[ $status -eq 0 ] && echo "tools_names: $(wc -l <"$tool") files under tools/, none at its top but capprof.c and CMakeLists.txt, no name shared with $(wc -l <"$runtime") in src/ and asm/"
exit $status
