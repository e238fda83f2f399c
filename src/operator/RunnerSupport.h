// Start-up steps both runners (embedded and real cluster) share: opening the journal with the
// user-facing messages, and starting the metrics/probe server. Blocking; not thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "adapters/Clock.h"
#include "operator/HistoryUi.h"
#include "operator/JournalUpkeep.h"
#include "operator/StatusServer.h"
#include "runtime/Stack.h"
#include "wal/Journal.h"

namespace rayjournal::operator_ {

inline constexpr int kExitJournalUnusable = 3;  // corrupt, locked or unreadable journal
inline constexpr int kExitJournalDiskFull = 6;  // no space to start (nothing was lost)

// How openJournalOrLog waits while another process holds the journal's lock (a forced Pod
// deletion starts the replacement while the old container still runs, on the same volume).
struct LockWait {
  std::function<bool()> keepWaiting;             // false (a stop signal): give up
  std::function<void(bool waiting)> onWaiting;   // true when the wait starts, false when it ends
  std::chrono::milliseconds poll{250};
  std::chrono::seconds remindEvery{30};          // the log repeats the wait this often
};

// Logs why and returns nullptr when the journal cannot be opened, with the exit code to use
// (kExitJournalDiskFull for a full disk, else kExitJournalUnusable); logs a salvage. With a
// LockWait, a journal locked by another process is waited for (blocking, polled) instead of
// refused: the process neither reads nor writes it until that process has exited.
std::unique_ptr<wal::Journal> openJournalOrLog(const std::string& dir, bool salvage,
                                               int& exitCode, const LockWait* lockWait = nullptr);

// The runner's upkeep options with the stack's in-doubt intents and the clock filled in.
UpkeepOptions upkeepFor(UpkeepOptions options, runtime::Stack& stack, const Clock& clock);

// The history UI's server and what it reads, stopped before the journal closes (declare it after
// the journal).
struct HistoryUiServer {
  std::unique_ptr<HistoryUi> ui;
  std::unique_ptr<StatusServer> server;
};
// Serves the history UI on options.address (empty: none). A bind failure stops the operator
// (ok=false, logged) only when the address was given: the default one taken (another operator
// on this machine) leaves it running without the UI, with a warning saying how to choose one.
HistoryUiServer startHistoryUi(const HistoryUiAddress& options, wal::Journal& journal, bool& ok);

// nullptr with ok=true when address is empty; nullptr with ok=false (logged) when it cannot bind.
std::unique_ptr<StatusServer> startStatusServer(const std::string& address, Metrics& metrics,
                                                std::function<bool()> ready, bool& ok,
                                                std::function<std::string()> notReadyReason = nullptr);

}  // namespace rayjournal::operator_
