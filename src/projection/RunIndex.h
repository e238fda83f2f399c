// Every RayJob run a journal holds, deleted ones included: what `rayjournal-replay list` and the
// history UI's list show. A run is a RayJob by namespace, name and uid (a RayJob deleted and
// created again under its name is a second run). Fed the records in journal order, once each;
// memory follows the runs and the intents in flight, not the records. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "events/Events.h"
#include "wal/Record.h"

namespace rayjournal::projection {

struct Run {
  std::string ns, name, uid;
  uint64_t firstSeq = 0, lastSeq = 0;
  int64_t firstMs = 0, lastMs = 0, deletedMs = 0;
  // From the last WriteStatus that landed.
  std::string status, jobStatus, reason, jobId, rayCluster;
  std::string lastError;  // the last side effect that failed: action, target and why
  uint32_t attempts = 0;
  size_t pending = 0;    // intents without an outcome yet (in flight, or in doubt when stopped)
  bool deleted = false;  // its finalizer came off: the RayJob is gone from Kubernetes
};

// Which runs to keep; every field optional. status and reason: comma-separated lists matched
// without regard to case, "none" for a run without one yet.
struct RunFilter {
  std::string ns, name, status, reason;
  std::optional<uint64_t> sinceSeq;  // a record at or after this seq
  std::optional<int64_t> sinceMs;    // a record at or after this time
  bool deletedOnly = false;
  bool pendingOrFailed = false;  // only runs with an intent pending or a failed side effect
  bool matches(const Run& run) const;
};

class RunIndex {
 public:
  // Records of other kinds are skipped; a record at or below appliedThrough() is ignored.
  void apply(const wal::Record& record);
  uint64_t appliedThrough() const { return through_; }
  // The runs that pass, by namespace, name and first seq.
  std::vector<Run> runs(const RunFilter& filter = {}) const;
  // The same order without copying them: memory stays flat however many match.
  void forEach(const RunFilter& filter, const std::function<void(const Run&)>& visit) const;
  // The newest run of a RayJob, if the journal has one.
  const Run* newest(const std::string& ns, const std::string& name) const;

 private:
  struct Pending {
    size_t run;
    events::Action action;
    events::StatusDigest status;
  };
  Run& runFor(const wal::Record& r);
  void intend(const wal::Record& r, size_t run);
  void land(const wal::Record& r);
  static void landed(Run& run, const Pending& p, int64_t timeMs);

  std::vector<Run> runs_;
  std::map<std::string, size_t> current_;  // ns/name -> its newest run
  // Every run's position by namespace, name and first seq (a run is added once, never moved).
  std::map<std::tuple<std::string, std::string, uint64_t>, size_t> ordered_;
  std::map<uint64_t, Pending> pending_;
  uint64_t through_ = 0;
};

// A run as the JSON `list -o json` and the UI's API print.
nlohmann::json runToJson(const Run& run);

}  // namespace rayjournal::projection
