// rayjournal-replay timeline (text, JSON, HTML) and report.
#include "ReplayCommon.h"

#include <deque>
#include <fstream>

#include "adapters/TimeFormat.h"
#include "events/EventCodec.h"
#include "events/JournalBodies.h"
#include "events/RecordJson.h"
#include "TimelineHtml.h"
#include "controller/raycluster/RayClusterViews.h"

namespace rayjournal::replay {

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

}  // namespace rayjournal::replay
