# capprof-completion.bash -- bash completion for the capprof tool, installed
# as share/bash-completion/completions/capprof. Commands and options are read
# from 'capprof --help' and 'capprof COMMAND --help', so they stay in step
# with the tool; dumps complete as *.capprof files.

_capprof_options()
{
  # every --long option a help text names (--color[=WHEN] gives --color=)
  "$1" ${2:+"$2"} --help 2>/dev/null |
    grep -o -e '--[a-z][a-z-]*\(\[\?=\)\?' | sed 's/\[=$/=/' | sort -u
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
      COMPREPLY=($(compgen -P --format= -W "json csv callgrind folded speedscope html pprof" -- "${cur#--format=}"))
      return ;;
    --color=*)
      COMPREPLY=($(compgen -P --color= -W "auto always never" -- "${cur#--color=}"))
      return ;;
    --sort=*)
      COMPREPLY=($(compgen -P --sort= -W "self incl calls avg max cpu name total" -- "${cur#--sort=}"))
      return ;;
  esac
  case $prev in
    -o|--output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    -f) COMPREPLY=($(compgen -W "json csv callgrind folded speedscope html pprof" -- "$cur")); return ;;
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
