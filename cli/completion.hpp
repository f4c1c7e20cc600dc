#pragma once
// The bash completion script `takosumi completion` prints. Subcommands and flags only: ids are
// not looked up (that would call the control plane on every <Tab>).
namespace takosumi::cli {

inline constexpr const char* kBashCompletion = R"bash(# bash completion for takosumi
_takosumi() {
  local cur prev words cword
  _init_completion 2>/dev/null || { cur="${COMP_WORDS[COMP_CWORD]}"; prev="${COMP_WORDS[COMP_CWORD-1]}"; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
  local globals="--url --token-file --ca-file --client-cert --client-key --config --allow-insecure-http --output --help --version"
  local commands="workspace capsule plan apply cancel runs logs rollback drift state-versions outputs connection agents activity completion"
  case "$prev" in
    --token-file|--ca-file|--client-cert|--client-key|--config|-f|--file) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --output|-o) COMPREPLY=($(compgen -W "text json" -- "$cur")); return ;;
  esac
  local command="" sub="" i
  for ((i = 1; i < cword; i++)); do
    case "${words[i]}" in
      -*) ;;
      *) if [ -z "$command" ]; then command="${words[i]}"; elif [ -z "$sub" ]; then sub="${words[i]}"; fi ;;
    esac
  done
  case "$command" in
    "") COMPREPLY=($(compgen -W "$commands $globals" -- "$cur")) ;;
    workspace) [ -z "$sub" ] && COMPREPLY=($(compgen -W "list create" -- "$cur")) ;;
    capsule) if [ -z "$sub" ]; then COMPREPLY=($(compgen -W "create list show" -- "$cur")); else COMPREPLY=($(compgen -W "--file --workspace" -- "$cur")); fi ;;
    connection) if [ -z "$sub" ]; then COMPREPLY=($(compgen -W "create list revoke" -- "$cur")); else COMPREPLY=($(compgen -W "--file --workspace" -- "$cur")); fi ;;
    agents) [ -z "$sub" ] && COMPREPLY=($(compgen -W "revoke" -- "$cur")) ;;
    plan|rollback|drift) COMPREPLY=($(compgen -W "--no-wait --follow" -- "$cur")) ;;
    apply) COMPREPLY=($(compgen -W "--accept-data-loss --no-wait --follow" -- "$cur")) ;;
    logs) COMPREPLY=($(compgen -W "--follow" -- "$cur")) ;;
    runs|activity) COMPREPLY=($(compgen -W "--limit --workspace" -- "$cur")) ;;
  esac
}
complete -F _takosumi takosumi
)bash";

}  // namespace takosumi::cli
