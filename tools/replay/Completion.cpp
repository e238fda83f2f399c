#include "Completion.h"

namespace rayjournal::replay {
namespace {

// Source it (`source <(rayjournal-replay completion bash)`); RayJob names come from the journal
// given with --journal on the line, or the default one.
constexpr const char* kBash = R"BASH(# rayjournal-replay bash completion
_rayjournal_replay() {
  local cur prev words cword
  cur="${COMP_WORDS[COMP_CWORD]}"
  prev="${COMP_WORDS[COMP_CWORD-1]}"
  local commands="summary list timeline serve verify reindex state export diagnose diff report completion"
  local globals="--journal -o --output --kubeconfig --context --ray-dashboard-address --use-kubernetes-proxy --help"
  local cmd="" journal="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "${COMP_WORDS[i]}" in
      --journal) journal="${COMP_WORDS[i+1]}" ;;
      summary|list|timeline|serve|verify|reindex|state|export|diagnose|diff|report|completion)
        [ -z "$cmd" ] && cmd="${COMP_WORDS[i]}" ;;
    esac
  done
  case "$prev" in
    -o|--output) COMPREPLY=($(compgen -W "text json" -- "$cur")); return ;;
    --journal|--cluster-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --kubeconfig|--html) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --format) COMPREPLY=($(compgen -W "jsonl" -- "$cur")); return ;;
  esac
  local flags=""
  case "$cmd" in
    "") COMPREPLY=($(compgen -W "$commands $globals" -- "$cur")); return ;;
    timeline) flags="--json --html --follow" ;;
    serve) flags="--ui-bind-address" ;;
    list) flags="--namespace --status --reason --since --deleted" ;;
    state) flags="--at" ;;
    export) flags="--format --since" ;;
    diagnose) flags="--cluster-dir" ;;
    diff) flags="--against-kube --cluster-dir" ;;
    report) flags="--html --limit" ;;
    completion) COMPREPLY=($(compgen -W "bash zsh" -- "$cur")); return ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags $globals" -- "$cur"))
  elif [[ "$cmd" == timeline || "$cmd" == state || "$cmd" == diagnose ]]; then
    local names
    names=$(rayjournal-replay ${journal:+--journal "$journal"} state 2>/dev/null |
      sed -n 's/^    "\([^"]*\/[^"]*\)": {$/\1/p')
    COMPREPLY=($(compgen -W "$names" -- "$cur"))
  fi
}
complete -F _rayjournal_replay rayjournal-replay
)BASH";

// Put it on fpath as _rayjournal-replay, or `source <(rayjournal-replay completion zsh)`.
constexpr const char* kZsh = R"ZSH(#compdef rayjournal-replay
_rayjournal_replay() {
  local -a commands
  commands=(
    'summary:time range, record counts, restarts, RayJobs by status, in-doubt intents'
    'list:every RayJob, deleted ones included, with filters'
    'timeline:every record of one RayJob or RayCluster'
    'serve:the history UI over the journal'
    'verify:check the whole history'
    'reindex:rebuild the per-object index (operator stopped)'
    'state:the projection at a point, as JSON'
    'export:stream records as JSON lines'
    'diagnose:troubleshooting checklist for one RayJob'
    'diff:compare the projection with live RayJob status'
    'report:the whole journal as one HTML page'
    'completion:print a shell completion script'
  )
  _arguments -C \
    '--journal[journal directory]:directory:_files -/' \
    '(-o --output)'{-o,--output}'[output format]:format:(text json)' \
    '--kubeconfig[cluster for diagnose and diff]:file:_files' \
    '--context[kubeconfig context]:context:' \
    '--ray-dashboard-address[host:port of every Ray dashboard]:address:' \
    '--use-kubernetes-proxy[dashboards through the API server proxy]' \
    '1:command:->command' \
    '*::argument:->argument'
  case $state in
    command) _describe 'command' commands ;;
    argument)
      case $words[1] in
        timeline) _arguments '--json[JSON lines]' '--html[write an HTML page]:file:_files' '(-f --follow)'{-f,--follow}'[then follow the journal]' '1:object:' ;;
        serve) _arguments '--ui-bind-address[host:port]:address:' ;;
        list) _arguments '(-n --namespace)'{-n,--namespace}'[only this namespace]:namespace:' '--status[deployment statuses]:statuses:' '--reason[reasons]:reasons:' '--since[a seq, RFC 3339 time or duration]:position:' '--deleted[only deleted RayJobs]' ;;
        state) _arguments '--at[a seq or an RFC 3339 time]:position:' '1:rayjob:' ;;
        export) _arguments '--format[format]:format:(jsonl)' '--since[a seq or an RFC 3339 time]:position:' ;;
        diagnose) _arguments '--cluster-dir[embedded cluster store]:directory:_files -/' '1:rayjob:' ;;
        diff) _arguments '--against-kube[compare with Kubernetes]' '--cluster-dir[embedded cluster store]:directory:_files -/' ;;
        report) _arguments '--html[the page to write]:file:_files' '--limit[newest records]:count:' ;;
        completion) _arguments '1:shell:(bash zsh)' ;;
      esac ;;
  esac
}
compdef _rayjournal_replay rayjournal-replay
)ZSH";

}  // namespace

int printCompletion(const std::string& shell, std::ostream& out) {
  if (shell == "bash") {
    out << kBash;
    return 0;
  }
  if (shell == "zsh") {
    out << kZsh;
    return 0;
  }
  return 2;
}

}  // namespace rayjournal::replay
