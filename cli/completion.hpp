#pragma once
// The bash completion script `takosumi completion` prints. Subcommands and flags only: ids are
// not looked up (that would call the control plane on every <Tab>).
namespace takosumi::cli {

inline constexpr const char* kBashCompletion = R"bash(# bash completion for takosumi
_takosumi() {
  local cur prev words cword
  _init_completion 2>/dev/null || { cur="${COMP_WORDS[COMP_CWORD]}"; prev="${COMP_WORDS[COMP_CWORD-1]}"; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
  local globals="--url --token-file --ca-file --client-cert --client-key --config --allow-insecure-http --output -o --help --version"
  local commands="workspace capsule plan apply cancel run runs logs rollback drift state-versions outputs connection agents activity completion"
  case "$prev" in
    --token-file|--ca-file|--client-cert|--client-key|--config|-f|--file)
      compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --output|-o) COMPREPLY=($(compgen -W "text json" -- "$cur")); return ;;
  esac
  local command="" sub="" i
  for ((i = 1; i < cword; i++)); do
    case "${words[i]}" in
      --url|--token-file|--ca-file|--client-cert|--client-key|--config|--output|-o|-f|--file|--workspace|--limit) ((i++)) ;;
      -*) ;;
      *) if [ -z "$command" ]; then command="${words[i]}"; elif [ -z "$sub" ]; then sub="${words[i]}"; fi ;;
    esac
  done
  case "$command" in
    "") COMPREPLY=($(compgen -W "$commands $globals" -- "$cur")) ;;
    workspace) [ -z "$sub" ] && COMPREPLY=($(compgen -W "list create" -- "$cur")) ;;
    capsule) case "$sub" in
        "") COMPREPLY=($(compgen -W "create list show update" -- "$cur")) ;;
        create) COMPREPLY=($(compgen -W "--file --workspace $globals" -- "$cur")) ;;
        update) COMPREPLY=($(compgen -W "--file --name --git-url --ref --module-path $globals" -- "$cur")) ;;
        list) COMPREPLY=($(compgen -W "--workspace $globals" -- "$cur")) ;;
      esac ;;
    connection) case "$sub" in
        "") COMPREPLY=($(compgen -W "create list revoke" -- "$cur")) ;;
        create) COMPREPLY=($(compgen -W "--file --workspace $globals" -- "$cur")) ;;
        list) COMPREPLY=($(compgen -W "--workspace $globals" -- "$cur")) ;;
      esac ;;
    run) [ -z "$sub" ] && COMPREPLY=($(compgen -W "show plan" -- "$cur")) ;;
    agents) [ -z "$sub" ] && COMPREPLY=($(compgen -W "revoke" -- "$cur")) ;;
    plan|rollback|drift) COMPREPLY=($(compgen -W "--no-wait --follow $globals" -- "$cur")) ;;
    apply) COMPREPLY=($(compgen -W "--accept-data-loss --no-wait --follow $globals" -- "$cur")) ;;
    logs) COMPREPLY=($(compgen -W "--follow $globals" -- "$cur")) ;;
    runs) COMPREPLY=($(compgen -W "--limit $globals" -- "$cur")) ;;
    activity) COMPREPLY=($(compgen -W "--limit --workspace $globals" -- "$cur")) ;;
    *) COMPREPLY=($(compgen -W "$globals" -- "$cur")) ;;
  esac
}
complete -F _takosumi takosumi
)bash";

}  // namespace takosumi::cli
