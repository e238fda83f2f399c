// `rayjournal-bench recovery`: builds a journal with N live RayJobs and M records of history
// (K intents left in doubt), then measures a restart to ready: open, load the newest
// checkpoint, replay the tail, resolve the in-doubt intents. With and without a checkpoint.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rayjournal::bench {

struct RecoveryOptions {
  int jobs = 10000;
  uint64_t historyRecords = 1000000;
  int inDoubt = 100;
  uint64_t tailRecords = 10000;  // records appended after the checkpoint
  std::string dir;
  bool keep = false;  // leave the built journals in dir (to time rayjournal-replay on them)
  bool reuse = false;  // time the journals a --keep run left in dir instead of building them
};

nlohmann::json runRecovery(const RecoveryOptions& options);

}  // namespace rayjournal::bench
