#!/bin/sh
# headers.sh SRC -- the runtime's headers stay small (docs/internals.md,
# "Layout"): none over 500 lines, so that each module's interface reads on
# its own. Prints the largest and fails naming each one over the limit.
set -eu
src=$1
limit=500
status=0
for h in $(find "$src/src" -name '*.h' | sort); do
  n=$(wc -l <"$h")
  if [ "$n" -gt "$limit" ]; then
    echo "FAIL: ${h#"$src"/} has $n lines (at most $limit)"
    status=1
  fi
done
largest=$(find "$src/src" -name '*.h' -exec wc -l {} + | grep -v ' total$' | sort -n | tail -1)
echo "largest runtime header: ${largest#"${largest%%[! ]*}"}"
exit $status
