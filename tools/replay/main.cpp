// rayjournal-replay: answers from the journal alone what the controller did, when and why.
#include <CLI/CLI.hpp>
#include <iostream>

#include "ReplayCommands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "rayjournal-replay: audit-log replay of a rayjournal journal (read-only, safe beside a "
      "running operator, except reindex).\n"
      "Exit codes: 0 ok, 1 verify failed / drift found, 2 usage, 3 cannot open or corrupt "
      "journal."};
  app.require_subcommand(1);
  std::string journal = "./rayjournal-data/journal", target, at, since,
              clusterDir = "./rayjournal-data/cluster", format = "jsonl";
  bool json = false, againstKube = false;
  auto journalOpt = [&](CLI::App* c) {
    c->add_option("--journal", journal, "journal directory")->capture_default_str();
  };
  auto* summary = app.add_subcommand(
      "summary", "time range, record counts, restarts, RayJobs by status, in-doubt intents");
  journalOpt(summary);
  auto* timeline =
      app.add_subcommand("timeline", "every record of one RayJob or RayCluster, by epoch and attempt");
  journalOpt(timeline);
  timeline->add_option("object", target, "NAMESPACE/NAME of a RayJob, or raycluster/NAMESPACE/NAME")->required();
  timeline->add_flag("--json", json, "JSON lines instead of text");
  auto* verify = app.add_subcommand(
      "verify", "check the whole history; non-zero exit with a report on any violation");
  journalOpt(verify);
  auto* reindex = app.add_subcommand(
      "reindex", "rebuild the per-object index from the records (operator stopped: opens writable)");
  journalOpt(reindex);
  auto* state =
      app.add_subcommand("state", "the projection as it was at a point (time travel), as JSON");
  journalOpt(state);
  state->add_option("rayjob", target, "NAMESPACE/NAME (all RayJobs when omitted)");
  state->add_option("--at", at, "a seq or an RFC 3339 time");
  auto* exportCmd = app.add_subcommand(
      "export", "stream records as JSON lines (schema rayjournal.export.v1, see EXPORT.md)");
  journalOpt(exportCmd);
  exportCmd->add_option("--format", format, "jsonl")->check(CLI::IsMember({"jsonl"}));
  exportCmd->add_option("--since", since, "a seq or an RFC 3339 time");
  auto* diagnose = app.add_subcommand(
      "diagnose", "troubleshooting checklist for one RayJob against the cluster");
  journalOpt(diagnose);
  diagnose->add_option("rayjob", target, "NAMESPACE/NAME")->required();
  diagnose->add_option("--cluster-dir", clusterDir, "embedded cluster store")
      ->capture_default_str();
  auto* diff = app.add_subcommand("diff", "compare the projection with live RayJob status");
  journalOpt(diff);
  diff->add_flag("--against-kube", againstKube, "compare with Kubernetes (required)")->required();
  diff->add_option("--cluster-dir", clusterDir, "embedded cluster store")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  std::optional<rayjournal::replay::Target> t;
  if (!target.empty()) {
    t = rayjournal::replay::parseTarget(target);
    if (!t) {
      std::cerr << "rayjournal-replay: \"" << target << "\" is not NAMESPACE/NAME\n";
      return 2;
    }
  }
  auto position = [&](const std::string& text,
                      const char* flag) -> std::optional<rayjournal::replay::Position> {
    if (text.empty()) return std::nullopt;
    auto p = rayjournal::replay::parsePosition(text);
    if (!p) {
      std::cerr << "rayjournal-replay: " << flag << " " << text
                << " is neither a seq nor an RFC 3339 time\n";
      std::exit(2);
    }
    return p;
  };
  using namespace rayjournal::replay;
  if (*summary) return rayjournal::replay::summary(journal, std::cout);
  if (*timeline) return rayjournal::replay::timeline(journal, *t, json, std::cout);
  if (*verify) return rayjournal::replay::verify(journal, std::cout);
  if (*reindex) return rayjournal::replay::reindex(journal, std::cout);
  if (*state) return rayjournal::replay::state(journal, t, position(at, "--at"), std::cout);
  if (*exportCmd) return exportJsonl(journal, position(since, "--since"), std::cout);
  if (*diagnose) return rayjournal::replay::diagnose(journal, *t, clusterDir, std::cout);
  if (*diff) return diffAgainstKube(journal, clusterDir, std::cout);
  return 2;
}
