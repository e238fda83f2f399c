#include "ReplayCommands.h"

#include "TimelineHtml.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "adapters/TimeFormat.h"
#include "adapters/sim/SimKube.h"
#include "adapters/sim/SimRay.h"
#include "controller/rayjob/Children.h"
#include "controller/JsonAccess.h"
#include "events/EventCodec.h"
#include "events/JournalBodies.h"
#include "events/RecordJson.h"
#include "controller/raycluster/RayClusterViews.h"
#include "model/Names.h"
#include "projection/JobProjection.h"
#include "projection/JournalVerifier.h"
#include "wal/Journal.h"
#include "wal/JournalError.h"

namespace rayjournal::replay {
namespace {

using nlohmann::json;

// "scanned N of M records" on stderr, only when stderr is a terminal and the journal is large.
class Progress {
 public:
  explicit Progress(uint64_t total)
      : total_(total), enabled_(isatty(STDERR_FILENO) && total > 200000) {}
  ~Progress() {
    if (enabled_) std::fprintf(stderr, "\r%*s\r", 60, "");
  }
  void tick() {
    if (enabled_ && ++seen_ % 100000 == 0) {
      std::fprintf(stderr, "\rscanned %llu of %llu records (%d%%)", (unsigned long long)seen_,
                   (unsigned long long)total_, int(100 * seen_ / total_));
    }
  }

 private:
  uint64_t total_, seen_ = 0;
  bool enabled_;
};

struct OpenError {
  std::string message;
};

// What diff and diagnose compare against cannot be read: they must not report an all-clear.
struct ClusterDirError {
  std::string message;
};

// The sources diagnose and diff read; ClusterDirError (exit 2) when one cannot be set up.
Sources sourcesOrThrow(const LiveOptions& options) {
  try {
    return openSources(options);
  } catch (const std::runtime_error& e) {
    throw ClusterDirError{e.what()};
  }
}

std::unique_ptr<wal::Journal> openReadOnly(const std::string& dir) {
  wal::JournalOptions options;
  options.readOnly = true;
  try {
    return wal::Journal::open(dir, options);
  } catch (const wal::JournalError& e) {
    throw OpenError{e.what()};
  }
}

// Runs a command body, mapping journal failures to exit code 3 with the cause.
template <typename F>
int guarded(std::ostream& out, F&& body) {
  try {
    return body();
  } catch (const OpenError& e) {
    out << "rayjournal-replay: cannot open the journal: " << e.message << "\n";
  } catch (const ClusterDirError& e) {
    out << "rayjournal-replay: " << e.message << "\n";
    return 2;
  } catch (const kube::ApiError& e) {
    out << "rayjournal-replay: cannot read Kubernetes: " << e.what() << "\n";
    return 2;
  } catch (const wal::CorruptionError& e) {
    out << "rayjournal-replay: " << e.what() << "\n";
  } catch (const wal::JournalError& e) {
    out << "rayjournal-replay: " << e.what() << "\n";
  }
  return 3;
}

std::string seconds(int64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%+.3fs", double(ms) / 1000.0);
  return buf;
}

// Replays the projection through `through` (inclusive), from the newest checkpoint at or below.
std::unique_ptr<projection::JobProjection> projectionAt(wal::Journal& journal, uint64_t through) {
  auto holder = std::make_unique<projection::JobProjection>();
  projection::JobProjection& p = *holder;
  uint64_t from = journal.firstSeq();
  for (uint64_t seq : journal.checkpointSeqs()) {
    auto cp = journal.checkpointAt(seq);
    if (cp->coversThrough <= through && cp->coversThrough + 1 > from) {
      p.restore(cp->state);
      from = cp->coversThrough + 1;
    }
  }
  journal.scan(from, [&](const wal::Record& r) {
    if (r.seq > through) return false;
    if (r.type != wal::RecordType::Checkpoint) p.apply(r);
    return true;
  });
  return holder;
}

uint64_t seqAt(wal::Journal& journal, const Position& at) {
  if (at.seq) return *at.seq;
  uint64_t last = 0;
  journal.scan(0, [&](const wal::Record& r) {
    if (r.timeMs > *at.timeMs) return false;
    last = r.seq;
    return true;
  });
  return last;
}

std::string describe(const wal::Record& r) {
  const json b = events::bodyToJson(r);
  switch (r.type) {
    case wal::RecordType::Intent: {
      std::string text = "intend   " + b.value("action", "") + " " + b.value("target", "");
      if (b.contains("status") && b["status"].contains("readyWorkerReplicas"))
        text += " " + b["status"].value("state", std::string("not ready"));  // a RayCluster's
      else if (b.contains("status"))
        text += " " + b["status"].value("jobDeploymentStatus", "");
      if (b.contains("why")) text += "  (why: " + b["why"].get<std::string>() + ")";
      return text;
    }
    case wal::RecordType::Outcome:
      if (b.contains("resolved_after_restart")) {
        return "resolved " + b.value("action", "") + " " + b.value("target", "") + " (seq " +
               std::to_string(b.value("intent_seq", 0)) +
               ", in doubt at restart): " + b["resolved_after_restart"].get<std::string>();
      }
      return "outcome  " + b.value("action", "") + " " + b.value("target", "") + ": " +
             b.value("result", "") +
             (b.contains("detail") ? " — " + b["detail"].get<std::string>() : "");
    case wal::RecordType::Observation: {
      std::string what = b.value("observation", "");
      if (what == "AttemptStarted") {
        return "observe  attempt " + std::to_string(b.value("attempt", 0)) +
               " starts: RayCluster " + b.value("rayClusterName", "") + ", submission " +
               b.value("jobId", "");
      }
      if (what == "Drift")
        return "observe  drift: journal expected " + b.value("journal_expected", "") +
               ", Kubernetes has " + b.value("kubernetes_has", "");
      if (what == "SpecChanged") {
        std::string by = b.value("changed_by", "");
        return "observe  spec changed (generation " + std::to_string(b.value("generation", 0)) +
               ") by " + (by.empty() ? "an unknown writer" : by) + ": " + b.value("workers", "");
      }
      return "observe  " + what + " " + b.value("status", "");
    }
    default:
      return std::string(wal::recordTypeName(r.type));
  }
}

}  // namespace

std::optional<Target> parseTarget(const std::string& input) {
  std::string text = input, kind = "RayJob";
  for (const auto& [prefix, k] : {std::pair{"raycluster/", "RayCluster"},
                                  {"rayclusters/", "RayCluster"}, {"rayjob/", "RayJob"},
                                  {"rayjobs/", "RayJob"}}) {
    if (text.rfind(prefix, 0) == 0) {
      text = text.substr(std::string(prefix).size());
      kind = k;
    }
  }
  auto slash = text.find('/');
  Target t{slash == std::string::npos ? "default" : text.substr(0, slash),
           slash == std::string::npos ? text : text.substr(slash + 1)};
  if (t.ns.empty() || t.name.empty() || t.name.find('/') != std::string::npos) return std::nullopt;
  t.kind = kind;
  return t;
}

std::optional<Position> parsePosition(const std::string& text) {
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos)
    return Position{std::stoull(text), std::nullopt};
  if (auto t = parseRfc3339(text)) return Position{std::nullopt, *t};
  return std::nullopt;
}

namespace {

// The RayJobs by last written status and the intents in doubt, from a whole projection.
void addProjectionCounts(json& report, const projection::JobProjection& p) {
  std::map<std::string, int> byStatus;
  const json all = p.toJson();
  for (const auto& [key, st] : all.items()) byStatus[st.value("last_deployment_status", "")]++;
  report["rayjobsByLastWrittenStatus"] = byStatus;
  json doubts = json::array();
  for (const auto& d : p.inDoubt())
    doubts.push_back({{"kind", d.kind}, {"key", d.key},
                      {"action", events::actionName(d.intent.action)},
                      {"target", d.intent.target}, {"seq", d.intent.seq}});
  report["inDoubt"] = std::move(doubts);
}

// What summary needs of the projection, kept while the scan streams: each RayJob's last written
// deployment status and the intents still without an outcome, as JobProjection derives them
// (a new uid under a name starts its history over). A few dozen bytes per RayJob and per intent
// in flight, so memory follows the RayJobs, not the records (a whole projection keeps every
// RayJob's recent intents and attempts: 600 MB at 50,000 RayJobs).
class SummaryTracker {
 public:
  void apply(const wal::Record& r) {
    if (r.object.kind != "RayJob" && r.object.kind != "RayCluster") return;
    const std::string key = r.object.ns + "/" + r.object.name;
    Object& o = (r.object.kind == "RayJob" ? jobs_ : clusters_)[key];
    if (!r.object.uid.empty() && o.uid != r.object.uid) {
      if (!o.uid.empty()) forget(r.object.kind, key, o);
      o.uid = r.object.uid;
    }
    if (r.type == wal::RecordType::Intent) return intend(r, key);
    if (r.type == wal::RecordType::Outcome) return land(r, o);
    if (r.type != wal::RecordType::Observation || r.object.kind != "RayJob") return;
    auto observation = events::decodeObservation(r);
    if (const auto* drift = observation ? std::get_if<events::Drift>(&*observation) : nullptr)
      o.lastStatus = drift->kubernetesHas;
  }
  json byStatus() const {
    std::map<std::string, int> counts;
    for (const auto& [key, o] : jobs_) counts[o.lastStatus]++;
    return counts;
  }
  json inDoubt() const {
    json out = json::array();
    for (const auto& [seq, p] : pending_)
      out.push_back({{"kind", p.kind}, {"key", p.key}, {"action", events::actionName(p.action)},
                     {"target", p.target}, {"seq", seq}});
    std::stable_sort(out.begin(), out.end(), [](const json& a, const json& b) {
      return a["kind"] != b["kind"] ? a["kind"] > b["kind"] : a["key"] < b["key"];
    });
    return out;
  }

 private:
  struct Object {
    std::string uid, lastStatus;
  };
  struct Pending {
    std::string kind, key, target, status;  // status: a WriteStatus's jobDeploymentStatus
    events::Action action;
  };
  void intend(const wal::Record& r, const std::string& key) {
    events::IntentBody body = events::decodeIntent(r);
    auto st = body.status.find("jobDeploymentStatus");
    const auto* text = st == body.status.end() ? nullptr : std::get_if<std::string>(&st->second);
    pending_[r.seq] = {r.object.kind, key, body.target, text ? *text : "", body.action};
  }
  void land(const wal::Record& r, Object& o) {
    events::OutcomeBody body = events::decodeOutcome(r);
    auto it = pending_.find(body.intentSeq);
    if (it == pending_.end()) return;
    if (events::landed(body.result) && it->second.action == events::Action::WriteStatus &&
        r.object.kind == "RayJob")
      o.lastStatus = it->second.status;
    pending_.erase(it);
  }
  void forget(const std::string& kind, const std::string& key, Object& o) {
    o = Object{};
    std::erase_if(pending_, [&](const auto& p) { return p.second.kind == kind && p.second.key == key; });
  }
  std::map<std::string, Object> jobs_, clusters_;
  std::map<uint64_t, Pending> pending_;
};

// What summary prints, as one document (the text form renders it). Streams the journal once; a
// journal pruned by retention starts from its newest checkpoint's projection instead.
json summaryReport(const std::string& dir, wal::Journal& journal) {
  json report = {{"journal", dir}, {"instance", journal.instanceId()},
                 {"firstSeq", journal.firstSeq()}, {"latestSeq", journal.latestSeq()}};
  std::map<std::string, uint64_t> counts;
  int64_t first = 0, last = 0;
  json restarts = json::array();
  SummaryTracker tracker;
  const bool pruned = journal.firstSeq() > 1;
  Progress progress(journal.latestSeq() - journal.firstSeq() + 1);
  journal.scan(0, [&](const wal::Record& r) {
    progress.tick();
    counts[std::string(wal::recordTypeName(r.type))]++;
    if (!first) first = r.timeMs;
    last = r.timeMs;
    if (!pruned) tracker.apply(r);
    if (r.type == wal::RecordType::ControllerStarted) {
      json body = events::bodyToJson(r);
      restarts.push_back({{"epoch", r.epoch}, {"time", toRfc3339(r.timeMs)},
                          {"replayed", body.value("replayed", 0)},
                          {"inDoubt", body.value("in_doubt", 0)}});
    }
    return true;
  });
  report["from"] = toRfc3339(first);
  report["to"] = toRfc3339(last);
  report["records"] = counts;
  report["restarts"] = std::move(restarts);
  report["lostSeqs"] = journal.lostRanges().empty() ? "" : journal.lostRanges().toString();
  report["missingAcknowledgedSeqs"] =
      journal.missingAcknowledged().empty() ? "" : journal.missingAcknowledged().toString();
  if (pruned) {
    addProjectionCounts(report, *projectionAt(journal, journal.latestSeq()));
  } else {
    report["rayjobsByLastWrittenStatus"] = tracker.byStatus();
    report["inDoubt"] = tracker.inDoubt();
  }
  return report;
}

void printSummary(const json& r, std::ostream& out) {
  out << "journal " << r["journal"].get<std::string>() << " (instance "
      << r["instance"].get<std::string>() << ", format 1)\n";
  out << "records " << r["firstSeq"] << ".." << r["latestSeq"] << " from "
      << r["from"].get<std::string>() << " to " << r["to"].get<std::string>() << "\n";
  if (!r["lostSeqs"].get<std::string>().empty())
    out << "lost seqs (salvage): " << r["lostSeqs"].get<std::string>() << "\n";
  if (!r["missingAcknowledgedSeqs"].get<std::string>().empty())
    out << "MISSING acknowledged seqs: " << r["missingAcknowledgedSeqs"].get<std::string>()
        << " (the journal ends before its high-water mark; rayjournal-replay verify fails)\n";
  for (const auto& [type, n] : r["records"].items()) out << "  " << type << ": " << n << "\n";
  out << "restarts:\n";
  for (const auto& e : r["restarts"])
    out << "  epoch " << e["epoch"] << " at " << e["time"].get<std::string>() << ": replayed "
        << e["replayed"] << " records, " << e["inDoubt"] << " intents in doubt\n";
  out << "RayJobs by last written deployment status:\n";
  for (const auto& [status, n] : r["rayjobsByLastWrittenStatus"].items())
    out << "  " << (status.empty() ? "(none)" : status) << ": " << n << "\n";
  out << "in doubt now: " << r["inDoubt"].size() << "\n";
  for (const auto& d : r["inDoubt"])
    out << "  " << d["kind"].get<std::string>() << " " << d["key"].get<std::string>() << " "
        << d["action"].get<std::string>() << " " << d["target"].get<std::string>() << " (seq "
        << d["seq"] << ")\n";
}

}  // namespace

int summary(const std::string& dir, Output output, std::ostream& out) {
  return guarded(out, [&] {
    auto journal = openReadOnly(dir);
    json report = summaryReport(dir, *journal);
    if (output == Output::Json)
      out << report.dump(2) << "\n";
    else
      printSummary(report, out);
    return 0;
  });
}

namespace {
bool hasRecords(wal::Journal& journal, const wal::ObjectRef& object) {
  bool any = false;
  journal.scanObject(object, 0, [&](const wal::Record&) { return !(any = true); });
  return any;
}
}  // namespace

namespace {

bool isObservation(const wal::Record& r, const char* what) {
  return r.type == wal::RecordType::Observation &&
         events::bodyToJson(r).value("observation", "") == what;
}

bool isPodIntent(const wal::Record& r) {
  if (r.type != wal::RecordType::Intent) return false;
  std::string action = events::bodyToJson(r).value("action", "");
  return action == "CreatePod" || action == "DeletePod";
}

// The spec changes of a RayJob's RayClusters (the Ray autoscaler's patches, a user's edits) and
// the Pod intents that followed each until the cluster's next status write: what a RayJob's
// timeline shows of its clusters beside its own records.
std::vector<wal::Record> specChangesOf(wal::Journal& journal, const std::string& ns,
                                       const std::vector<std::string>& clusters) {
  std::vector<wal::Record> found;
  for (const auto& c : clusters) {
    if (c.empty()) continue;
    bool following = false;
    journal.scanObject({"RayCluster", ns, c, ""}, 0, [&](const wal::Record& r) {
      if (isObservation(r, "SpecChanged")) following = true;
      if (following && (isPodIntent(r) || r.type == wal::RecordType::Observation))
        found.push_back(r);
      else if (r.type == wal::RecordType::Intent)
        following = false;
      return true;
    });
  }
  return found;
}

// The target's records and, for a RayJob, its clusters' spec changes, in journal order.
std::vector<wal::Record> timelineRecords(wal::Journal& journal, const Target& target,
                                         std::vector<std::string>& clusters) {
  std::vector<wal::Record> records;
  journal.scanObject({target.kind, target.ns, target.name, ""}, 0, [&](const wal::Record& r) {
    if (isObservation(r, "AttemptStarted"))
      clusters.push_back(events::bodyToJson(r).value("rayClusterName", ""));
    records.push_back(r);
    return true;
  });
  if (target.kind != "RayJob" || records.empty()) return records;
  std::vector<wal::Record> changes = specChangesOf(journal, target.ns, clusters);
  records.insert(records.end(), changes.begin(), changes.end());
  std::stable_sort(records.begin(), records.end(),
                   [](const wal::Record& a, const wal::Record& b) { return a.seq < b.seq; });
  return records;
}

}  // namespace

int timeline(const std::string& dir, const Target& target, bool asJson, std::ostream& out) {
  return guarded(out, [&] {
    auto journal = openReadOnly(dir);
    std::vector<std::string> clusters;  // a RayJob's clusters, for the pointer at the end
    std::vector<wal::Record> records = timelineRecords(*journal, target, clusters);
    if (records.empty()) {
      out << "no records for " << target.kind << " " << target.ns << "/" << target.name << "\n";
      return 1;
    }
    const int64_t start = records.front().timeMs;
    uint64_t epoch = 0, attempt = 0;
    if (!asJson)
      out << target.kind << " " << target.ns << "/" << target.name << " (uid "
          << records.front().object.uid << "), first record " << toRfc3339(start) << "\n";
    for (const auto& r : records) {
      // A record of one of the RayJob's clusters says whose it is.
      const bool other = r.object.kind != target.kind;
      const std::string text = (other ? "RayCluster " + r.object.name + ": " : "") + describe(r);
      if (asJson) {
        json j = events::recordToJson(r);
        j["text"] = text;
        out << j.dump() << "\n";
        continue;
      }
      if (r.epoch != epoch) {
        out << (epoch ? "── controller restarted: epoch " : "── epoch ") << r.epoch << " ──\n";
        epoch = r.epoch;
      }
      if (r.attempt != attempt && !other) {
        out << "  attempt " << r.attempt;
        if (target.kind == "RayCluster" && events::bodyToJson(r).contains("rayjob"))
          out << " of RayJob " << events::bodyToJson(r).value("rayjob", "");
        out << "\n";
        attempt = r.attempt;
      }
      out << "    " << seconds(r.timeMs - start) << "  #" << r.seq << "  " << text << "\n";
    }
    for (const auto& c : clusters) {
      // A RayCluster named by an attempt but never created (its create was in doubt at a
      // restart and found absent, so the next epoch chose new names) has no timeline to show.
      if (c.empty() || asJson || !hasRecords(*journal, {"RayCluster", target.ns, c, ""})) continue;
      out << "  RayCluster " << c << " (its Pods and Services): rayjournal-replay timeline "
          << "raycluster/" << target.ns << "/" << c << "\n";
    }
    return 0;
  });
}

namespace {

int writePage(const std::string& htmlFile, const std::string& title, const json& records,
              const std::string& lanes, std::ostream& out) {
  std::ofstream file(htmlFile);
  writeTimelineHtml(title, records, file, lanes);
  file.close();
  if (!file) {
    out << "rayjournal-replay: cannot write " << htmlFile << "\n";
    return 2;
  }
  out << "wrote " << htmlFile << ": " << title << ", " << records.size() << " records\n";
  return 0;
}

}  // namespace

int reportHtml(const std::string& dir, const std::string& htmlFile, size_t limit,
               std::ostream& out) {
  return guarded(out, [&] {
    auto journal = openReadOnly(dir);
    std::deque<json> kept;  // the newest `limit` records: memory follows the page, not the journal
    uint64_t total = 0;
    journal->scan(0, [&](const wal::Record& r) {
      bool object = r.object.kind == "RayJob" || r.object.kind == "RayCluster";
      if (!object && r.type != wal::RecordType::ControllerStarted) return true;
      json j = events::recordToJson(r);
      j["text"] = describe(r);
      kept.push_back(std::move(j));
      if (kept.size() > limit) kept.pop_front();
      ++total;
      return true;
    });
    json records(json::value_t::array);
    for (auto& j : kept) records.push_back(std::move(j));
    std::string title = "journal " + dir;
    if (total > limit) title += " (the newest " + std::to_string(limit) + " of " + std::to_string(total) + " records)";
    return writePage(htmlFile, title, records, "object", out);
  });
}

int timelineHtml(const std::string& dir, const Target& target, const std::string& htmlFile,
                 std::ostream& out) {
  return guarded(out, [&] {
    auto journal = openReadOnly(dir);
    json records = json::array();
    journal->scanObject({target.kind, target.ns, target.name, ""}, 0, [&](const wal::Record& r) {
      json j = events::recordToJson(r);
      j["text"] = describe(r);
      records.push_back(std::move(j));
      return true;
    });
    const std::string title = target.kind + " " + target.ns + "/" + target.name;
    if (records.empty()) {
      out << "no records for " << title << "\n";
      return 1;
    }
    return writePage(htmlFile, title, records, "attempt", out);
  });
}

int verify(const std::string& dir, Output output, std::ostream& out) {
  return guarded(out, [&] {
    auto journal = openReadOnly(dir);
    auto report = projection::verifyJournal(*journal);
    if (output == Output::Json) {
      json violations = json::array();
      for (const auto& v : report.violations)
        violations.push_back({{"seq", v.seq}, {"rule", v.rule}, {"message", v.message}});
      out << json{{"journal", dir}, {"ok", report.ok()}, {"records", report.records},
                  {"checkpointsChecked", report.checkpointsChecked},
                  {"checkpointsDropped", report.checkpointsDropped},
                  {"lostSeqs", report.lost.empty() ? "" : report.lost.toString()},
                  {"violations", std::move(violations)}}
                 .dump(2)
          << "\n";
      return report.ok() ? 0 : 1;
    }
    for (const auto& [from, to] : report.lost.ranges())
      out << "LOST seqs " << from << ".." << to
          << " (found missing by a salvage; see its JournalSalvaged record)\n";
    if (report.checkpointsDropped)
      out << "DROPPED " << report.checkpointsDropped
          << " checkpoint states (a salvage could not trust them; replay starts earlier)\n";
    for (const auto& v : report.violations)
      out << "VIOLATION seq " << v.seq << " [" << v.rule << "] " << v.message << "\n";
    out << "verified " << report.records << " records, " << report.checkpointsChecked
        << " checkpoints: "
        << (report.ok() ? "ok" : std::to_string(report.violations.size()) + " violations") << "\n";
    return report.ok() ? 0 : 1;
  });
}

int reindex(const std::string& dir, Output output, std::ostream& out) {
  return guarded(out, [&] {
    std::unique_ptr<wal::Journal> journal;
    try {
      journal = wal::Journal::open(dir, events::journalOptions({}));
    } catch (const wal::CorruptionError&) {
      throw;
    } catch (const wal::JournalError& e) {
      throw OpenError{e.what()};
    }
    uint64_t written = journal->rebuildIndex();
    if (output == Output::Json)
      out << json{{"journal", dir}, {"indexEntries", written}}.dump() << "\n";
    else
      out << "rebuilt the per-object index of " << dir << ": " << written << " entries\n";
    return 0;
  });
}

namespace {

// One RayJob's projection through a seq, from its own records only (the per-object index): a
// RayJob's state depends on nothing else, and reading it costs that RayJob's records.
json jobStateThrough(wal::Journal& journal, const std::string& key, uint64_t through) {
  projection::JobProjection p;
  auto slash = key.find('/');
  journal.scanObject({"RayJob", key.substr(0, slash), key.substr(slash + 1), ""}, 0,
                     [&](const wal::Record& r) {
                       if (r.seq > through) return false;
                       p.apply(r);
                       return true;
                     });
  return p.toJson(key);
}

// Every RayJob's state, printed one RayJob at a time in the layout of json::dump(2): memory
// follows one RayJob and the list of names, not the journal.
void streamAllStates(wal::Journal& journal, uint64_t through, std::ostream& out) {
  std::set<std::string> keys;
  journal.scan(0, [&](const wal::Record& r) {
    if (r.seq > through) return false;
    if (r.object.kind == "RayJob") keys.insert(r.object.ns + "/" + r.object.name);
    return true;
  });
  out << "{\n  \"at_seq\": " << through << ",\n  \"jobs\": {";
  bool firstJob = true;
  for (const auto& key : keys) {
    json one = jobStateThrough(journal, key, through);
    if (!one.contains(key)) continue;
    std::string body = one[key].dump(2);
    std::string indented;
    for (char c : body) indented += c == '\n' ? std::string("\n    ") : std::string(1, c);
    out << (firstJob ? "\n" : ",\n") << "    " << json(key).dump() << ": " << indented;
    firstJob = false;
  }
  out << (firstJob ? "}\n}\n" : "\n  }\n}\n");
}

}  // namespace

int state(const std::string& dir, const std::optional<Target>& target,
          const std::optional<Position>& at, std::ostream& out) {
  return guarded(out, [&] {
    auto journal = openReadOnly(dir);
    uint64_t through = at ? seqAt(*journal, *at) : journal->latestSeq();
    if (journal->firstSeq() > 1) {  // pruned: the history before is in a checkpoint
      auto holder = projectionAt(*journal, through);
      json result{{"at_seq", through},
                  {"jobs", holder->toJson(target ? target->ns + "/" + target->name : "")}};
      out << result.dump(2) << "\n";
      return 0;
    }
    if (!target) {
      streamAllStates(*journal, through, out);
      return 0;
    }
    const std::string key = target->ns + "/" + target->name;
    out << json{{"at_seq", through}, {"jobs", jobStateThrough(*journal, key, through)}}.dump(2)
        << "\n";
    return 0;
  });
}

int exportJsonl(const std::string& dir, const std::optional<Position>& since, std::ostream& out) {
  return guarded(out, [&] {
    auto journal = openReadOnly(dir);
    uint64_t from = since && since->seq ? *since->seq : 0;
    Progress progress(journal->latestSeq() - std::max(from, journal->firstSeq()) + 1);
    journal->scan(from, [&](const wal::Record& r) {
      progress.tick();
      if (since && since->timeMs && r.timeMs < *since->timeMs) return true;
      json j = events::recordToJson(r);
      j["schema"] = "rayjournal.export.v1";
      j["time"] = toRfc3339(r.timeMs);
      out << j.dump() << "\n";
      return true;
    });
    return 0;
  });
}

namespace {

// The checklist of one RayJob as a document: per check what the journal, Kubernetes and Ray
// say, side by side, a verdict, and for a problem the next command to run. The text form
// (printDiagnosis) renders the same document.
struct Diagnosis {
  json report;
  std::string ns, name;
  void check(const std::string& what, const std::string& journal, const std::string& kube,
             const std::string& ray, const std::string& problem = "",
             const std::string& next = "") {
    json c = {{"check", what}, {"journal", journal}, {"kubernetes", kube}, {"ray", ray},
              {"verdict", problem.empty() ? "ok" : "problem"}};
    if (!problem.empty()) {
      c["problem"] = problem;
      c["next"] = next.empty() ? timelineLine() : next;
      report["problems"].push_back(problem);
    }
    report["checks"].push_back(std::move(c));
  }
  std::string timelineLine() const { return "rayjournal-replay timeline " + ns + "/" + name; }
  std::string kubectl(const std::string& args) const { return "kubectl -n " + ns + " " + args; }
};

std::string presence(const std::optional<json>& obj, bool owned) {
  return !obj ? "absent" : owned ? "present, owned by this RayJob" : "present, NOT owned by this RayJob";
}

void diagnoseIdentities(Diagnosis& d, const std::optional<projection::JobState>& facts,
                        const std::optional<json>& doc) {
  json status = doc ? doc->value("status", json::object()) : json::object();
  const bool any = facts && !facts->attempts.empty();
  const std::string jCluster = any ? facts->attempts.back().rayClusterName : "";
  const std::string jId = any ? facts->attempts.back().jobId : "";
  const std::string kCluster = status.value("rayClusterName", ""), kId = status.value("jobId", "");
  d.report["journal"] = {{"attempt", facts ? facts->attempt : 0}, {"rayClusterName", jCluster},
                         {"submissionId", jId}};
  d.report["kubernetes"] = {{"exists", doc.has_value()}, {"rayClusterName", kCluster},
                            {"submissionId", kId},
                            {"deploymentStatus", status.value("jobDeploymentStatus", "")}};
  if (!doc) d.check("RayJob", facts ? "known" : "unknown", "absent", "", "the RayJob does not exist in Kubernetes", d.kubectl("get rayjob " + d.name));
  if (!facts) d.check("journal", "no record of this RayJob", doc ? "present" : "absent", "", "the journal has no record of this RayJob", "rayjournal-replay summary");
  if (!doc || !facts) return;
  const bool differ = !kCluster.empty() && (kCluster != jCluster || kId != jId);
  d.check("identities (attempt " + std::to_string(facts->attempt) + ")",
          "RayCluster " + jCluster + ", submission " + jId,
          "RayCluster " + kCluster + ", submission " + kId + ", " +
              status.value("jobDeploymentStatus", ""),
          "",
          differ ? "journal and Kubernetes disagree on the current identities (Kubernetes is "
                   "authoritative)"
                 : "",
          d.timelineLine());
}

std::string envOf(const json& job, const char* name) {
  const json& containers = controller::arrayAt(
      controller::objectAt(controller::objectAt(controller::objectAt(job, "spec"), "template"), "spec"),
      "containers");
  if (containers.empty()) return "";
  for (const auto& e : controller::arrayAt(containers[0], "env"))
    if (e.value("name", "") == name) return e.value("value", "");
  return "";
}

void diagnoseSubmitter(Diagnosis& d, kube::KubeClient& kube, const json& rayjob,
                       const std::string& uid, const std::string& jobId, bool expected) {
  auto job = kube.get("Job", d.ns, d.name);
  bool owned = job && controller::ownedBy(*job, uid);
  std::string problem;
  if (expected && !job) problem = "Job " + d.name + " is missing";
  if (job && !owned) problem = "Job " + d.name + " is not owned by this RayJob (uid " + uid + ")";
  std::string runs = job ? envOf(*job, "RAY_JOB_SUBMISSION_ID") : "";
  if (job && owned && !jobId.empty() && !runs.empty() && runs != jobId)
    problem = "submitter Job " + d.name + " runs submission " + runs + ", not this attempt's " + jobId;
  std::string pods;
  for (const auto& p : kube.list("Pod", d.ns, {{"job-name", d.name}}))
    pods += (pods.empty() ? "" : ", ") + controller::stringAt(p["metadata"], "name") + " " +
            controller::stringAt(controller::objectAt(p, "status"), "phase");
  (void)rayjob;
  d.check("submitter Job " + d.name, "submission " + jobId,
          presence(job, owned) + (runs.empty() ? "" : ", submission " + runs) +
              (pods.empty() ? "" : "; Pods: " + pods),
          "", problem, d.kubectl("describe job " + d.name));
}

void diagnoseChildren(Diagnosis& d, kube::KubeClient& kube, const std::optional<json>& doc) {
  if (!doc) return;
  json status = doc->value("status", json::object());
  const std::string uid = (*doc)["metadata"].value("uid", "");
  const std::string cluster = status.value("rayClusterName", "");
  const std::string deployment = status.value("jobDeploymentStatus", "");
  const bool live = deployment == "Initializing" || deployment == "Running";
  const bool selector = !(*doc)["spec"].value("clusterSelector", json::object()).empty();
  if (!cluster.empty()) {
    auto obj = kube.get("RayCluster", d.ns, cluster);
    bool owned = obj && (selector || controller::ownedBy(*obj, uid));
    std::string problem = live && !obj && !selector ? "RayCluster " + cluster + " is missing"
                          : obj && !owned ? "RayCluster " + cluster + " is not owned by this RayJob (uid " + uid + ")"
                                          : "";
    d.check("RayCluster " + cluster, "this attempt's cluster", presence(obj, owned) +
            (obj ? ", state " + controller::stringAt(controller::objectAt(*obj, "status"), "state") : ""),
            "", problem, d.kubectl("get raycluster " + cluster + " -o yaml"));
    auto head = kube.get("Pod", d.ns, model::headPodName(cluster));
    d.check("head Pod " + model::headPodName(cluster), "", !head ? "absent" :
            "present, " + controller::stringAt(controller::objectAt(*head, "status"), "phase"), "");
    std::string svc = controller::headServiceNameOf(
        cluster, obj ? controller::objectAt(*obj, "spec") : json::object());
    d.check("head Service " + svc, "", kube.get("Service", d.ns, svc) ? "present" : "absent", "");
  }
  if (!selector && deployment == "Running") {
    const std::string name = model::rayJobHeadServiceName(d.name);
    auto svc = kube.get("Service", d.ns, name);
    std::string selects = svc ? controller::stringAt(controller::objectAt(controller::objectAt(*svc, "spec"), "selector"), "ray.io/cluster") : "";
    d.check("RayJob head Service " + name, "selects " + cluster,
            svc ? "present, selects " + selects : "absent", "",
            svc && selects != cluster ? "Service " + name + " selects RayCluster " + selects + ", not " + cluster : "",
            d.kubectl("get service " + name + " -o yaml"));
  }
  if ((*doc)["spec"].value("submissionMode", "K8sJobMode") == "K8sJobMode")
    diagnoseSubmitter(d, kube, *doc, uid, status.value("jobId", ""), deployment == "Running");
}

void diagnoseRay(Diagnosis& d, Sources& sources, const std::optional<projection::JobState>& facts,
                 const std::optional<json>& doc) {
  json status = doc ? doc->value("status", json::object()) : json::object();
  const std::string dashboard = status.value("dashboardURL", "");
  const std::string id = status.value("jobId", "");
  if (dashboard.empty() || id.empty()) return;
  json& r = d.report["ray"];
  r = {{"submissionId", id}, {"dashboard", dashboard}};
  const bool journaled = facts && facts->submissions.count(id);
  const std::string says = journaled ? "submission " + id + " confirmed (journaled)" : "submission " + id;
  try {
    useClusterToken(sources, d.ns, status.value("rayClusterName", ""), dashboard);
    auto info = sources.ray->getJob(dashboard, id);
    r["present"] = info.has_value();
    if (info) r["status"] = info->status;
    d.check("Ray record of " + id, says, "", info ? "present, " + info->status : "absent",
            !info && journaled ? "Ray lost the record of a journaled submission" : "",
            "curl http://" + dashboard + "/api/jobs/" + id);
  } catch (const ray::RayError& e) {
    r["error"] = e.what();
    d.report["unreadable"].push_back("Ray dashboard " + dashboard + ": " + e.what());
    d.check("Ray record of " + id, says, "", std::string("cannot ask: ") + e.what());
  }
}

void diagnoseHistory(Diagnosis& d, kube::KubeClient& kube,
                     const std::optional<projection::JobState>& facts) {
  d.report["inDoubt"] = json::array();
  d.report["earlierAttempts"] = json::array();
  if (!facts) return;
  for (uint64_t seq : facts->inDoubt)
    d.report["inDoubt"].push_back({{"seq", seq},
                                   {"action", events::actionName(facts->intents.at(seq).action)},
                                   {"target", facts->intents.at(seq).target}});
  std::string resolved;
  for (const auto& [seq, f] : facts->intents)
    if (f.outcome && events::isResolution(*f.outcome))
      resolved += (resolved.empty() ? "" : ", ") + std::string("#") + std::to_string(seq) + " " +
                  events::actionName(f.action) + " " + f.target + ": " + events::resultName(*f.outcome);
  d.check("intents in doubt", std::to_string(facts->inDoubt.size()) + " in doubt" +
          (resolved.empty() ? "" : "; resolved after restarts: " + resolved), "", "",
          facts->inDoubt.empty() ? "" : std::to_string(facts->inDoubt.size()) + " intents in doubt");
  for (size_t i = 0; i + 1 < facts->attempts.size(); ++i) {
    const auto& a = facts->attempts[i];
    d.report["earlierAttempts"].push_back({{"attempt", a.attempt}, {"started", toRfc3339(a.startMs)},
                                           {"rayClusterName", a.rayClusterName}, {"submissionId", a.jobId}});
    auto left = a.rayClusterName.empty() ? std::nullopt : kube.get("RayCluster", d.ns, a.rayClusterName);
    bool going = left && (*left)["metadata"].contains("deletionTimestamp");
    d.check("earlier attempt " + std::to_string(a.attempt), "RayCluster " + a.rayClusterName + ", submission " + a.jobId,
            !left ? "RayCluster gone" : going ? "RayCluster being deleted" : "RayCluster still exists", "",
            left && !going && a.rayClusterName != facts->attempts.back().rayClusterName
                ? "RayCluster " + a.rayClusterName + " of attempt " + std::to_string(a.attempt) + " still exists"
                : "",
            d.kubectl("get raycluster " + a.rayClusterName));
  }
}

void printDiagnosis(const json& r, std::ostream& out) {
  auto text = [](const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  out << "RayJob " << text(r["rayjob"]) << " (against " << text(r["source"]) << ")\n";
  for (const auto& c : r["checks"]) {
    out << (c["verdict"] == "ok" ? "  ok  " : "  !!  ") << text(c["check"]) << "\n";
    for (const char* side : {"journal", "kubernetes", "ray"})
      if (!text(c[side]).empty()) out << "        " << side << ": " << text(c[side]) << "\n";
    if (c.contains("problem"))
      out << "        problem: " << text(c["problem"]) << "\n        next: " << text(c["next"]) << "\n";
  }
  for (const auto& u : r["unreadable"]) out << "  ? cannot read " << text(u) << "\n";
  if (!r["unreadable"].empty())
    out << "incomplete: a source could not be read (" << r["problems"].size()
        << " problems found in what could)\n";
  else
    out << (r["problems"].empty() ? "journal and world agree\n"
                                  : std::to_string(r["problems"].size()) + " problems found\n");
}

}  // namespace

int diagnose(const std::string& dir, const Target& target, const LiveOptions& live,
             Output output, std::ostream& out) {
  return guarded(out, [&] {
    auto journal = openReadOnly(dir);
    auto holder = projectionAt(*journal, journal->latestSeq());
    auto facts = holder->job(target.ns + "/" + target.name);
    Sources sources = sourcesOrThrow(live);
    auto doc = sources.kube->get("RayJob", target.ns, target.name);
    Diagnosis d{{{"rayjob", target.ns + "/" + target.name},
                 {"source", sources.describe},
                 {"checks", json::array()},
                 {"problems", json::array()},
                 {"unreadable", json::array()}},
                target.ns,
                target.name};
    diagnoseIdentities(d, facts, doc);
    diagnoseChildren(d, *sources.kube, doc);
    diagnoseRay(d, sources, facts, doc);
    diagnoseHistory(d, *sources.kube, facts);
    const bool incomplete = !d.report["unreadable"].empty();
    d.report["verdict"] = incomplete ? "incomplete" : d.report["problems"].empty() ? "ok" : "problems";
    if (output == Output::Json)
      out << d.report.dump(2) << "\n";
    else
      printDiagnosis(d.report, out);
    return incomplete ? 2 : d.report["problems"].empty() ? 0 : 1;
  });
}

int diffAgainstKube(const std::string& dir, const LiveOptions& live, Output output,
                    std::ostream& out) {
  return guarded(out, [&] {
    auto journal = openReadOnly(dir);
    auto holder = projectionAt(*journal, journal->latestSeq());
    auto& p = *holder;
    Sources sources = sourcesOrThrow(live);
    kube::KubeClient& kube = *sources.kube;
    json drifted = json::array();
    json all = p.toJson();
    for (const auto& [key, s] : all.items()) {
      auto slash = key.find('/');
      auto doc = kube.get("RayJob", key.substr(0, slash), key.substr(slash + 1));
      std::string expected = s.value("last_deployment_status", "");
      std::string actual =
          doc ? doc->value("status", json::object()).value("jobDeploymentStatus", "") : "(deleted)";
      if (doc && (*doc)["metadata"].value("uid", "") != s.value("uid", ""))
        actual += " (recreated, uid differs)";
      if (actual != expected && actual != "(deleted)")
        drifted.push_back({{"rayjob", key}, {"journalLastWrote", expected}, {"kubernetesHas", actual}});
    }
    if (output == Output::Json) {
      out << json{{"drifted", drifted}, {"rayjobs", all.size()}}.dump(2) << "\n";
      return drifted.empty() ? 0 : 1;
    }
    for (const auto& d : drifted)
      out << d["rayjob"].get<std::string>() << ": journal last wrote "
          << d["journalLastWrote"].get<std::string>() << ", Kubernetes has "
          << d["kubernetesHas"].get<std::string>() << "\n";
    out << drifted.size() << " RayJobs drifted\n";
    return drifted.empty() ? 0 : 1;
  });
}

}  // namespace rayjournal::replay
