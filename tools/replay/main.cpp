// rayjournal-replay: answers from the journal alone what the controller did, when and why.
#include <CLI/CLI.hpp>
#include <iostream>

#include "Completion.h"
#include "ReplayCommands.h"

namespace {

using namespace rayjournal::replay;

struct Args {
  std::string journal = "./rayjournal-data/journal", target, at, since, format = "jsonl",
              output = "text", shell, html, uiAddress = "127.0.0.1:8090";
  bool json = false, againstKube = false, follow = false;
  ListFilter list;
  size_t limit = 20000;
  LiveOptions live;
};

// The flags every command takes, before or after its name (kubectl and git style): declared
// once on the app; each subcommand falls through to them.
void addGlobalFlags(CLI::App& app, Args& a) {
  app.add_option("--journal", a.journal, "journal directory")->capture_default_str();
  app.add_option("-o,--output", a.output, "text or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));
  app.add_option("--kubeconfig", a.live.kubeconfig,
                 "diagnose and diff read this cluster (default: in-cluster in a pod, else "
                 "$KUBECONFIG or ~/.kube/config)");
  app.add_option("--context", a.live.context, "kubeconfig context (default: current)");
  app.add_option("--ray-dashboard-address", a.live.rayDashboardAddress,
                 "host:port of the Ray dashboard for every RayJob (as the operator's flag)");
  app.add_flag("--use-kubernetes-proxy", a.live.useKubernetesProxy,
               "reach Ray dashboards through the API server's service proxy");
}

CLI::App* command(CLI::App& app, const char* name, const char* help) {
  CLI::App* c = app.add_subcommand(name, help);
  c->fallthrough();
  return c;
}

void addCommands(CLI::App& app, Args& a) {
  command(app, "summary", "time range, record counts, restarts, RayJobs by status, in-doubt intents");
  auto* timeline = command(app, "timeline", "every record of one RayJob or RayCluster, by epoch and attempt");
  timeline->add_option("object", a.target, "NAMESPACE/NAME of a RayJob, or raycluster/NAMESPACE/NAME")->required();
  timeline->add_flag("--json", a.json, "JSON lines (the same as -o json)");
  timeline->add_flag("-f,--follow", a.follow,
                     "then print each record as the running operator journals it, until the "
                     "RayJob is deleted (as kubectl logs -f)");
  timeline->add_option("--html", a.html,
                       "write one self-contained HTML page (lanes per attempt, restarts, intents "
                       "as bars, a table of the records) to this file");
  auto* list = command(app, "list", "every RayJob in the journal, deleted ones included: status, attempts, pending intents, deletion");
  list->add_option("-n,--namespace", a.list.ns, "only this namespace");
  list->add_option("--status", a.list.status,
                   "only these jobDeploymentStatus values, comma-separated (none: no status yet)");
  list->add_option("--reason", a.list.reason, "only these status reasons, comma-separated");
  list->add_option("--since", a.since,
                   "only RayJobs with a record at or after this seq, RFC 3339 time or duration ago (90s, 2h, 7d)");
  list->add_flag("--deleted", a.list.deletedOnly, "only RayJobs whose deletion the journal shows");
  auto* serve = command(app, "serve", "serve the history UI (pages and JSON API) over the journal, live");
  serve->add_option("--ui-bind-address", a.uiAddress, "host:port to serve on (port 0 picks a free one)")
      ->capture_default_str();
  command(app, "verify", "check the whole history; non-zero exit with a report on any violation");
  command(app, "reindex", "rebuild the per-object index from the records (operator stopped: opens writable)");
  auto* state = command(app, "state", "the projection as it was at a point (time travel), as JSON");
  state->add_option("rayjob", a.target, "NAMESPACE/NAME (all RayJobs when omitted)");
  state->add_option("--at", a.at, "a seq or an RFC 3339 time");
  auto* exportCmd = command(app, "export", "stream records as JSON lines (schema rayjournal.export.v1, see EXPORT.md)");
  exportCmd->add_option("--format", a.format, "jsonl")->check(CLI::IsMember({"jsonl"}));
  exportCmd->add_option("--since", a.since, "a seq or an RFC 3339 time");
  auto* diagnose = command(app, "diagnose", "troubleshooting checklist for one RayJob against the cluster");
  diagnose->add_option("rayjob", a.target, "NAMESPACE/NAME")->required();
  diagnose->add_option("--cluster-dir", a.live.clusterDir,
                       "read the embedded cluster's store instead of a live cluster");
  auto* diff = command(app, "diff", "compare the projection with live RayJob status");
  diff->add_flag("--against-kube", a.againstKube, "compare with Kubernetes (required)")->required();
  diff->add_option("--cluster-dir", a.live.clusterDir,
                   "read the embedded cluster's store instead of a live cluster");
  auto* report = command(app, "report", "the whole journal as one HTML page (--html FILE), a lane per RayJob and RayCluster");
  report->add_option("--html", a.html, "the page to write")->required();
  report->add_option("--limit", a.limit, "the newest records to draw (bounds the page and the memory)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  auto* completion = command(app, "completion", "print a shell completion script (bash or zsh)");
  completion->add_option("shell", a.shell, "bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
}

std::optional<Position> position(const std::string& text, const char* flag) {
  if (text.empty()) return std::nullopt;
  auto p = parsePosition(text);
  if (!p) {
    std::cerr << "rayjournal-replay: " << flag << " " << text
              << " is neither a seq nor an RFC 3339 time\n";
    std::exit(2);
  }
  return p;
}

int run(const CLI::App& app, const Args& a, const std::optional<Target>& t) {
  const Output out = a.output == "json" || a.json ? Output::Json : Output::Text;
  auto is = [&](const char* name) { return app.got_subcommand(name); };
  if (is("summary")) return summary(a.journal, out, std::cout);
  if (is("timeline") && !a.html.empty()) return timelineHtml(a.journal, *t, a.html, std::cout);
  if (is("timeline")) return timeline(a.journal, *t, out == Output::Json, a.follow, std::cout);
  if (is("list")) {
    ListFilter filter = a.list;
    filter.since = position(a.since, "--since");
    return list(a.journal, filter, out, std::cout);
  }
  if (is("serve")) return serve(a.journal, a.uiAddress, std::cout);
  if (is("verify")) return verify(a.journal, out, std::cout);
  if (is("reindex")) return reindex(a.journal, out, std::cout);
  if (is("state")) return state(a.journal, t, position(a.at, "--at"), std::cout);
  if (is("export")) return exportJsonl(a.journal, position(a.since, "--since"), std::cout);
  if (is("diagnose")) return diagnose(a.journal, *t, a.live, out, std::cout);
  if (is("diff")) return diffAgainstKube(a.journal, a.live, out, std::cout);
  if (is("report")) return reportHtml(a.journal, a.html, a.limit, std::cout);
  if (is("completion")) return printCompletion(a.shell, std::cout);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "rayjournal-replay: audit-log replay of a rayjournal journal (read-only, safe beside a "
      "running operator, except reindex). Global flags (--journal, -o) go before or after the "
      "command.\n"
      "Exit codes: 0 ok, 1 verify failed / drift or problems found, 2 usage (or a source that "
      "cannot be read), 3 cannot open or corrupt journal."};
  app.require_subcommand(1);
  Args a;
  addGlobalFlags(app, a);
  addCommands(app, a);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  std::optional<Target> t;
  if (!a.target.empty()) {
    t = parseTarget(a.target);
    if (!t) {
      std::cerr << "rayjournal-replay: \"" << a.target << "\" is not NAMESPACE/NAME\n";
      return 2;
    }
  }
  return run(app, a, t);
}
