#!/bin/sh
# options.sh CAPPROF GEN_DUMP WORKDIR SRCDIR -- the command line against its
# own option tables: every option and value bash completion offers (read
# from --help and the tool's answers) is accepted by the command; every
# option of every command's --help is in the man page and the man page
# names none that is not; --help lists every export format; --width N with
# a space; an unknown --x=v is called unknown, a known flag given a value
# is not; progress on a terminal only.
set -eu
CAPPROF=$1 GEN=$2 W=$3 SRC=$4
rm -rf "$W" && mkdir -p "$W" && cd "$W"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
"$GEN" small.capprof small
COMPLETION=$SRC/tools/cmd/capprof-completion.bash
MAN=$SRC/docs/man/capprof.1

# what the completion script offers (its own functions, under bash)
complete_words() {   # complete_words WORD... : the last word completed
  bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _capprof; printf "%s\n" "${COMPREPLY[@]}"' \
    sh "$COMPLETION" "$@"
}
cmds=$(complete_words "$CAPPROF" "")
[ -n "$cmds" ] || fail "completion offers no command"
for c in $cmds; do
  for o in $(complete_words "$CAPPROF" "$c" "--"); do
    case $o in *=) arg="$o?" ;; *) arg=$o ;; esac
    timeout 20 "$CAPPROF" "$c" "$arg" </dev/null >/dev/null 2>err.txt || true
    grep -q "unknown option" err.txt && fail "completion offers '$c $o': $(cat err.txt)"
  done
  for k in $(complete_words "$CAPPROF" "$c" "--sort="); do
    timeout 20 "$CAPPROF" "$c" "$k" small.capprof </dev/null >/dev/null 2>err.txt || true
    grep -Eq "unknown option|--sort wants" err.txt && fail "completion offers '$c $k': $(cat err.txt)"
  done
done
[ "$(complete_words "$CAPPROF" report --sort=c | sort | tr '\n' ' ')" = "--sort=calls --sort=cpu " ] ||
  fail "report --sort=c completes to $(complete_words "$CAPPROF" report --sort=c)"
complete_words "$CAPPROF" tree --sort= | grep -q -e '--sort=avg' && fail "tree offers --sort=avg"
formats=$(complete_words "$CAPPROF" export --format= | sed 's/--format=//')
[ "$(echo $formats | wc -w)" -ge 7 ] || fail "completion's formats: $formats"

# --help lists every export format, in the command list and in export --help
"$CAPPROF" --help > help.txt
"$CAPPROF" export --help > export-help.txt
for f in $formats; do
  grep -q "^  export .*\\b$f\\b" help.txt || fail "capprof --help leaves out $f"
  grep -q "^      $f " export-help.txt || fail "export --help leaves out $f"
done

# the man page's options: every command's (long, or its short form), and no
# long option that no --help has
sed 's/\\-/-/g; s/\\f[BIRP]//g' "$MAN" > man.txt
grep -o -e '--[a-z][a-z-]*' man.txt | sort -u > man-opts.txt
: > help-opts.txt
: > help-named.txt
for c in "" $cmds; do
  "$CAPPROF" $c --help 2>/dev/null > h.txt || true
  sed -n 's/^  *\(-[a-zA-Z], \)\{0,1\}\(--[a-z][a-z-]*\).*/\1\2/p' h.txt >> help-opts.txt
  grep -o -e '--[a-z][a-z-]*' h.txt >> help-named.txt || true
done
sort -u help-opts.txt | while read -r a b; do
  case $a in
    -?,) grep -q -e "$b" man-opts.txt || grep -q -e "\(^\|[^a-z-]\)${a%,}\b" man.txt ||
           echo "$b" ;;
    *) grep -qx -e "$a" man-opts.txt || echo "$a" ;;
  esac
done > lacks.txt
for o in $(cat lacks.txt); do fail "the man page lacks $o"; done
sort -u help-named.txt -o help-named.txt
for o in $(comm -13 help-named.txt man-opts.txt); do
  case $o in --version) continue ;; esac
  fail "the man page names $o, which no --help has"
done

# --width N as --width=N
"$CAPPROF" --width=60 tree small.capprof > eq.txt 2>&1
"$CAPPROF" --width 60 tree small.capprof > sp.txt 2>&1 || fail "--width 60: $(cat sp.txt)"
cmp -s eq.txt sp.txt || fail "--width 60 differs from --width=60"
"$CAPPROF" tree --width 60 small.capprof > sp.txt 2>&1 || fail "tree --width 60: $(cat sp.txt)"
cmp -s eq.txt sp.txt || fail "tree --width 60 differs from --width=60"

# unknown options and values
set +e
"$CAPPROF" report --x=v small.capprof 2>err.txt; st=$?
set -e
[ "$st" = 2 ] && grep -q "^capprof: report: unknown option '--x'" err.txt ||
  fail "report --x=v: status $st, $(cat err.txt)"
set +e
"$CAPPROF" report --raw=1 small.capprof 2>err.txt; st=$?
set -e
[ "$st" = 2 ] && grep -q "unexpected value for option '--raw'" err.txt ||
  fail "report --raw=1: status $st, $(cat err.txt)"

# progress on stderr: on a terminal (a pty from script(1)), erased when done;
# never into a pipe; CAPPROF_PROGRESS=0 shows it at once, off never
pty() { script -qec "$1" /dev/null </dev/null >pty.txt 2>&1 || true; }
pty "CAPPROF_PROGRESS=0 '$CAPPROF' report small.capprof >/dev/null"
grep -q "capprof: loading small.capprof (1 of 1)" pty.txt || fail "no progress on a terminal: $(cat pty.txt)"
tr '\r' '\n' <pty.txt | tail -1 | grep -q '[^ ]' && fail "progress line not erased: $(od -c pty.txt | tail -3)"
pty "CAPPROF_PROGRESS=off '$CAPPROF' report small.capprof >/dev/null"
[ -s pty.txt ] && fail "CAPPROF_PROGRESS=off: $(cat pty.txt)"
pty "'$CAPPROF' report small.capprof >/dev/null"
[ -s pty.txt ] && fail "progress within the default second on a small dump: $(cat pty.txt)"
CAPPROF_PROGRESS=0 "$CAPPROF" report small.capprof >/dev/null 2>err.txt
[ -s err.txt ] && fail "progress into a pipe: $(cat err.txt)"
CAPPROF_PROGRESS=0 "$CAPPROF" export --format=json -o x.json small.capprof 2>err.txt
[ -s err.txt ] && fail "export: progress into a file: $(cat err.txt)"

# JSON: compact by default, --pretty indented, the same document; both
# valid against docs/capprof-profile.schema.json
"$CAPPROF" export --format=json -o c.json small.capprof || fail "export json"
"$CAPPROF" export --format=json --pretty -o p.json small.capprof || fail "export json --pretty"
grep -q '^  ' c.json && fail "json: indented by default"
grep -q '^      "name": ' p.json || fail "json --pretty: not indented"
python3 -c 'import json, sys; sys.exit(json.load(open("c.json")) != json.load(open("p.json")))' ||
  fail "json --pretty is another document"
for j in c.json p.json; do python3 "$SRC/tests/tool/check_exports.py" json $j || fail "schema: $j"; done
set +e
"$CAPPROF" export --format=csv --pretty small.capprof >/dev/null 2>err.txt; st=$?
set -e
[ "$st" = 2 ] || fail "--pretty with csv: status $st"

[ "$fails" = 0 ] && echo "options: all checks passed"
exit "$fails"
