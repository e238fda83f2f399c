// rayjournal-replay timeline (text, JSON, HTML) and report.
#include "ReplayCommon.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <fstream>
#include <map>
#include <thread>

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

// A record with its body decoded once: the predicates, the text and the JSON all read it.
struct Entry {
  wal::Record record;
  json body;
};

Entry entryOf(const wal::Record& r) { return {r, events::bodyToJson(r)}; }

bool isObservation(const Entry& e, const char* what) {
  return e.record.type == wal::RecordType::Observation && e.body.value("observation", "") == what;
}

bool isPodIntent(const Entry& e) {
  if (e.record.type != wal::RecordType::Intent) return false;
  const std::string action = e.body.value("action", "");
  return action == "CreatePod" || action == "DeletePod";
}

// What a RayJob's timeline shows of one of its RayClusters beside its own records: the spec
// changes (the Ray autoscaler's patches, a user's edits) and the Pod intents that followed each
// until the cluster's next other intent. Fed the cluster's records in journal order.
class ClusterChanges {
 public:
  bool take(const Entry& e) {
    if (isObservation(e, "SpecChanged")) following_ = true;
    if (following_ && (isPodIntent(e) || e.record.type == wal::RecordType::Observation))
      return true;
    if (e.record.type == wal::RecordType::Intent) following_ = false;
    return false;
  }

 private:
  bool following_ = false;
};

std::vector<Entry> specChangesOf(wal::Journal& journal, const std::string& ns,
                                 const std::vector<std::string>& clusters) {
  std::vector<Entry> found;
  for (const auto& c : clusters) {
    if (c.empty()) continue;
    ClusterChanges changes;
    journal.scanObject({"RayCluster", ns, c, ""}, 0, [&](const wal::Record& r) {
      Entry e = entryOf(r);
      if (changes.take(e)) found.push_back(std::move(e));
      return true;
    });
  }
  return found;
}

std::string clusterNamed(const Entry& e) {
  return isObservation(e, "AttemptStarted") ? e.body.value("rayClusterName", "") : "";
}

// The target's records and, for a RayJob, its clusters' spec changes, in journal order.
std::vector<Entry> timelineRecords(wal::Journal& journal, const Target& target,
                                   std::vector<std::string>& clusters) {
  std::vector<Entry> records;
  journal.scanObject({target.kind, target.ns, target.name, ""}, 0, [&](const wal::Record& r) {
    records.push_back(entryOf(r));
    if (std::string c = clusterNamed(records.back()); !c.empty()) clusters.push_back(c);
    return true;
  });
  if (target.kind != "RayJob" || records.empty()) return records;
  std::vector<Entry> changes = specChangesOf(journal, target.ns, clusters);
  std::move(changes.begin(), changes.end(), std::back_inserter(records));
  std::stable_sort(records.begin(), records.end(), [](const Entry& a, const Entry& b) {
    return a.record.seq < b.record.seq;
  });
  return records;
}

// Prints a timeline one record at a time: bands for each controller restart and each attempt.
class TimelinePrinter {
 public:
  TimelinePrinter(const Target& target, bool asJson, std::ostream& out)
      : target_(target), asJson_(asJson), out_(out) {}

  bool asJson() const { return asJson_; }

  void print(const Entry& e) {
    const wal::Record& r = e.record;
    if (!started_) header(r);
    // A record of one of the RayJob's clusters says whose it is.
    const bool other = r.object.kind != target_.kind;
    const std::string text =
        (other ? "RayCluster " + r.object.name + ": " : "") + events::recordText(r, e.body);
    if (asJson_) {
      json j = events::recordToJson(r, e.body);
      j["text"] = text;
      out_ << j.dump() << "\n";
      return;
    }
    if (r.epoch != epoch_) {
      out_ << (epoch_ ? "── controller restarted: epoch " : "── epoch ") << r.epoch << " ──\n";
      epoch_ = r.epoch;
    }
    if (r.attempt != attempt_ && !other) {
      out_ << "  attempt " << r.attempt;
      if (target_.kind == "RayCluster" && e.body.contains("rayjob"))
        out_ << " of RayJob " << e.body.value("rayjob", "");
      out_ << "\n";
      attempt_ = r.attempt;
    }
    out_ << "    " << seconds(r.timeMs - start_) << "  #" << r.seq << "  " << text << "\n";
  }

 private:
  void header(const wal::Record& r) {
    started_ = true;
    start_ = r.timeMs;
    if (!asJson_)
      out_ << target_.kind << " " << target_.ns << "/" << target_.name << " (uid "
           << r.object.uid << "), first record " << toRfc3339(start_) << "\n";
  }
  const Target& target_;
  const bool asJson_;
  std::ostream& out_;
  bool started_ = false;
  int64_t start_ = 0;
  uint64_t epoch_ = 0, attempt_ = 0;
};

// The RayJob's finalizer came off: it is deleted, and nothing more will be journaled for it.
bool endsHistory(const wal::Record& r, const Target& target) {
  if (target.kind != "RayJob" || r.type != wal::RecordType::Outcome ||
      r.object.kind != "RayJob" || r.object.name != target.name || r.object.ns != target.ns)
    return false;
  events::OutcomeBody body = events::decodeOutcome(r);
  return body.action == events::Action::RemoveFinalizer && events::landed(body.result);
}

constexpr auto kFollowPoll = std::chrono::milliseconds(250);

// timeline --follow: the records journaled after the first page, as the operator writes them,
// until the RayJob is deleted (or the command is interrupted, as kubectl logs -f).
void followTimeline(wal::Journal& journal, const Target& target, std::vector<std::string> clusters,
                    TimelinePrinter& printer, std::ostream& out) {
  std::map<std::string, ClusterChanges> changes;
  uint64_t next = journal.latestSeq() + 1;
  for (bool ended = false; !ended;) {
    out.flush();
    const uint64_t latest = journal.refresh();
    if (latest < next) {
      std::this_thread::sleep_for(kFollowPoll);
      continue;
    }
    journal.scan(next, [&](const wal::Record& r) {
      if (r.seq > latest) return false;
      next = r.seq + 1;
      const bool own = r.object.kind == target.kind && r.object.ns == target.ns &&
                       r.object.name == target.name;
      const bool ofCluster = r.object.kind == "RayCluster" && r.object.ns == target.ns &&
                             std::find(clusters.begin(), clusters.end(), r.object.name) !=
                                 clusters.end();
      if (own || ofCluster) {
        const Entry e = entryOf(r);
        if (own) {
          if (std::string c = clusterNamed(e); !c.empty()) clusters.push_back(c);
          printer.print(e);
        } else if (changes[r.object.name].take(e)) {
          printer.print(e);
        }
      }
      ended = ended || endsHistory(r, target);
      return true;
    });
  }
  if (!printer.asJson()) out << "── RayJob deleted: its history ends here ──\n";
}

}  // namespace

int timeline(const std::string& dir, const Target& target, bool asJson, bool follow,
             std::ostream& out) {
  return guarded(out, [&] {
    auto journal = follow ? openFollowing(dir) : openReadOnly(dir);
    std::vector<std::string> clusters;  // a RayJob's clusters, for the pointer at the end
    std::vector<Entry> records = timelineRecords(*journal, target, clusters);
    if (records.empty() && !follow) {
      out << "no records for " << target.kind << " " << target.ns << "/" << target.name << "\n";
      return 1;
    }
    if (records.empty() && !asJson)
      out << "no records for " << target.kind << " " << target.ns << "/" << target.name
          << " yet; following the journal\n";
    TimelinePrinter printer(target, asJson, out);
    for (const auto& r : records) printer.print(r);
    bool deleted = std::any_of(records.begin(), records.end(),
                               [&](const Entry& e) { return endsHistory(e.record, target); });
    if (follow && !deleted) followTimeline(*journal, target, clusters, printer, out);
    if (follow && deleted && !asJson) out << "── RayJob deleted: its history ends here ──\n";
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
      json j = events::recordToJsonWithText(r);
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
      json j = events::recordToJsonWithText(r);
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
