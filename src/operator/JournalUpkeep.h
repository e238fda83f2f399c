// The journal's upkeep while the operator runs, on one background thread:
// - writability: says in the log when the journal stops being writable (a full disk: side
//   effects pause, /readyz turns unready), reminds every `reminder` while it lasts, and says
//   when it resumes;
// - retention: prunes history older than `keepMs` or beyond `maxBytes` (docs/operations.md,
//   "Journal retention"), never what the newest checkpoint does not cover nor an intent still
//   in doubt;
// - scrub: re-reads old history at `scrubRecordsPerSecond`, logging and counting (metrics)
//   records it cannot read, so that damage is found before a restart or a user needs them.
// The destructor stops the thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "wal/Journal.h"

namespace rayjournal::operator_ {

struct UpkeepOptions {
  std::chrono::milliseconds reminder = std::chrono::seconds(30);
  int64_t keepMs = int64_t(7) * 24 * 3600 * 1000;  // 0: no age limit
  uint64_t maxBytes = 0;                            // 0: no size limit
  std::chrono::milliseconds retentionEvery = std::chrono::seconds(60);
  uint64_t scrubRecordsPerSecond = 2000;  // 0: no scrub
  std::function<uint64_t()> oldestInDoubt;  // seq of the oldest unresolved intent, 0: none
  std::function<int64_t()> nowMs;           // wall clock (record times are wall clock)
};

class JournalUpkeep {
 public:
  JournalUpkeep(wal::Journal& journal, UpkeepOptions options);
  ~JournalUpkeep();
  JournalUpkeep(const JournalUpkeep&) = delete;
  JournalUpkeep& operator=(const JournalUpkeep&) = delete;

  // One retention pass now (tests; the thread runs one every retentionEvery). Returns the
  // number of records pruned.
  uint64_t retainNow();

 private:
  void run();
  void watchWritable(std::chrono::steady_clock::time_point now);
  void scrubStep();
  uint64_t keepFromBySize();

  wal::Journal& journal_;
  UpkeepOptions options_;
  bool down_ = false;
  std::chrono::steady_clock::time_point lastSaid_;
  uint64_t scrubNext_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace rayjournal::operator_
