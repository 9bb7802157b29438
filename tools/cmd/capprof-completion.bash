# capprof-completion.bash -- bash completion for the capprof tool, installed
# as share/bash-completion/completions/capprof. Commands and options are read
# from 'capprof --help' and 'capprof COMMAND --help', formats and sort keys
# from the tool's own answer to a bad value ("--sort wants a, b or c"), so
# they stay in step with the tool (tests/tool/options.sh checks each one);
# dumps complete as *.capprof files.

_capprof_options()
{
  # the --long option each option line of the help text starts with, not
  # those its prose names (--color[=WHEN] gives --color=)
  "$1" ${2:+"$2"} --help 2>/dev/null |
    sed -n 's/^  *\(-[a-zA-Z], \)\{0,1\}\(--[a-z][a-z-]*\(\[\{0,1\}=\)\{0,1\}\).*/\2/p' |
    sed 's/\[=$/=/' | sort -u
}

# the values an option takes: the tool's error for a bad one lists them
_capprof_values()
{
  "$1" ${2:+"$2"} "$3=?" 2>&1 >/dev/null | sed -n "s/.*$3 wants \([^:]*\), not '?'.*/\1/p" |
    sed 's/ or /, /; s/ *([^)]*)//g; s/,/ /g'
}

_capprof_formats()
{
  "$1" export --format=? 2>&1 >/dev/null | sed -n "s/.*unknown format '?' (\(.*\))$/\1/p" |
    sed 's/,/ /g'
}

_capprof()
{
  local cur prev cmd i tool=${COMP_WORDS[0]}
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD-1]}
  cmd=
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      -*) ;;
      *) cmd=${COMP_WORDS[i]}; break ;;
    esac
  done
  COMPREPLY=()
  case $cur in
    --format=*)
      COMPREPLY=($(compgen -P --format= -W "$(_capprof_formats "$tool")" -- "${cur#--format=}"))
      return ;;
    --color=*)
      COMPREPLY=($(compgen -P --color= -W "auto always never" -- "${cur#--color=}"))
      return ;;
    --sort=*)
      COMPREPLY=($(compgen -P --sort= -W "$(_capprof_values "$tool" "$cmd" --sort)" -- "${cur#--sort=}"))
      return ;;
  esac
  case $prev in
    -o|--output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    -f|--format) COMPREPLY=($(compgen -W "$(_capprof_formats "$tool")" -- "$cur")); return ;;
  esac
  if [[ -z $cmd ]]; then
    if [[ $cur == -* ]]; then
      COMPREPLY=($(compgen -W "--help --version $(_capprof_options "$tool")" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$("$tool" --help 2>/dev/null | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')" -- "$cur"))
    fi
    return
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_capprof_options "$tool" "$cmd")" -- "$cur"))
    [[ ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
    return
  fi
  # dumps (and directories holding them)
  COMPREPLY=($(compgen -f -X '!*.capprof' -- "$cur") $(compgen -d -- "$cur"))
}

complete -F _capprof capprof
