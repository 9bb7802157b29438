#!/bin/sh
# narration.sh SRC -- README.md and docs/*.md are a reference for today's code,
# not a lab notebook (issue 34). Fails, naming file:line, on:
#   - a heading that titles a chapter by ordinal ("Eleventh session: ...");
#   - narration of past work: "we tried", "used to" (the passive "is used to"
#     is fine), "previously", "session" (except the technical "sampling
#     session", SAMPLE_SESSIONS and "DbgHelp session");
#   - a commit hash (7 to 40 hex digits with at least one digit and one letter);
#   - a paragraph of README.md over 120 words;
#   - docs/performance.md over 400 lines.
# Fenced code blocks are skipped: they hold program output, not prose. What was
# tried and dropped goes into commit message bodies; the old notebook is the
# tag docs-notebook (git show docs-notebook:docs/performance.md).
set -eu
SRC=$1
cd "$SRC"
status=0

files="README.md"
for f in docs/*.md; do files="$files $f"; done

for f in $files; do
  awk -v F="$f" '
    BEGIN {
      ord = "(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|" \
            "eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|" \
            "seventeenth|eighteenth|nineteenth|twentieth|twenty-[a-z]+|[0-9]+(st|nd|rd|th))"
      bad = 0
    }
    function fail(why) { printf "%s:%d: %s: %s\n", F, NR, why, $0; bad = 1 }
    /^(```|~~~)/ { code = !code; next }
    code { next }
    {
      l = tolower($0)
      if (l ~ /^#/ && l ~ ("(^|[^a-z])" ord "[^a-z].*(session|chapter)"))
        fail("chapter titled by ordinal")
      if (l ~ /(^|[^a-z])we tried/) fail("narration (\"we tried\")")
      u = l
      gsub(/(is|are|be|been|being|gets?) used to/, "", u)
      if (u ~ /(^|[^a-z])used to([^a-z]|$)/) fail("narration (\"used to\")")
      if (l ~ /(^|[^a-z])previously/) fail("narration (\"previously\")")
      s = l
      gsub(/sampling sessions?|sample_sessions|dbghelp sessions?/, "", s)
      if (s ~ /session/) fail("narration (\"session\")")
      h = l
      while (match(h, /(^|[^0-9a-z_])[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]+([^0-9a-z_]|$)/)) {
        t = substr(h, RSTART, RLENGTH)
        gsub(/[^0-9a-f]/, "", t)
        if (length(t) <= 40 && t ~ /[0-9]/ && t ~ /[a-f]/) { fail("commit hash (" t ")"); break }
        h = substr(h, RSTART + RLENGTH - 1)
      }
    }
    END { exit bad }
  ' "$f" || status=1
done

# README.md: no paragraph over 120 words. A paragraph is a run of prose lines;
# a heading, a table row, a list item or a blank line starts a new one.
awk '
  function flush() {
    if (words > 120) { printf "README.md:%d: paragraph of %d words (at most 120)\n", start, words; bad = 1 }
    words = 0; start = 0
  }
  /^(```|~~~)/ { flush(); code = !code; next }
  code { next }
  /^[ \t]*$/ || /^#/ || /^\|/ || /^!\[/ { flush(); next }
  /^[ \t]*([-*+]|[0-9]+\.)[ \t]/ { flush() }
  { if (!start) start = NR; words += NF }
  END { flush(); exit bad }
' README.md || status=1

n=$(wc -l <docs/performance.md)
if [ "$n" -gt 400 ]; then
  echo "docs/performance.md: $n lines (at most 400)"; status=1
fi

[ "$status" = 0 ] && echo "README.md and docs/*.md: no narration, README paragraphs <= 120 words, performance.md $n lines"
exit $status
