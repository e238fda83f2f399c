// Start-up steps both runners (embedded and real cluster) share: opening the journal with the
// user-facing messages, and starting the metrics/probe server. Blocking; not thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <memory>
#include <string>

#include "operator/StatusServer.h"
#include "wal/Journal.h"

namespace rayjournal::operator_ {

inline constexpr int kExitJournalUnusable = 3;  // corrupt, locked or unreadable journal
inline constexpr int kExitJournalDiskFull = 6;  // no space to start (nothing was lost)

// Logs why and returns nullptr when the journal cannot be opened, with the exit code to use
// (kExitJournalDiskFull for a full disk, else kExitJournalUnusable); logs a salvage.
std::unique_ptr<wal::Journal> openJournalOrLog(const std::string& dir, bool salvage,
                                               int& exitCode);

// Says in the log when the journal stops being writable (a full disk: side effects pause,
// /readyz turns unready), reminds every `reminder` while it lasts, and says when it resumes.
// Owns one thread, stopped by the destructor.
class JournalWatch {
 public:
  explicit JournalWatch(wal::Journal& journal,
                        std::chrono::milliseconds reminder = std::chrono::seconds(30));
  ~JournalWatch();
  JournalWatch(const JournalWatch&) = delete;
  JournalWatch& operator=(const JournalWatch&) = delete;

 private:
  void run();
  wal::Journal& journal_;
  std::chrono::milliseconds reminder_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

// nullptr with ok=true when address is empty; nullptr with ok=false (logged) when it cannot bind.
std::unique_ptr<StatusServer> startStatusServer(const std::string& address, Metrics& metrics,
                                                std::function<bool()> ready, bool& ok);

}  // namespace rayjournal::operator_
