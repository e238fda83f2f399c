// Helpers every rayjournal-replay command shares: the journal opened read-only, failures mapped
// to the commands' exit codes, the projection replayed to a point, one line per record.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "LiveSources.h"
#include "ReplayCommands.h"
#include "adapters/kube/KubeClient.h"
#include "projection/JobProjection.h"
#include "wal/Journal.h"
#include "wal/JournalError.h"

namespace rayjournal::replay {

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
Sources sourcesOrThrow(const LiveOptions& options);
// OpenError when the journal cannot be opened.
std::unique_ptr<wal::Journal> openReadOnly(const std::string& dir);
// The same as a follower beside the running operator: Journal::refresh takes in its new records.
std::unique_ptr<wal::Journal> openFollowing(const std::string& dir);

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

// "+1.234s"
std::string seconds(int64_t ms);
// Replays the projection through `through` (inclusive), from the newest checkpoint at or below.
std::unique_ptr<projection::JobProjection> projectionAt(wal::Journal& journal, uint64_t through);
// The last record's seq at or before a position.
uint64_t seqAt(wal::Journal& journal, const Position& at);
// One record as one line of a timeline.
std::string describe(const wal::Record& r);

}  // namespace rayjournal::replay
