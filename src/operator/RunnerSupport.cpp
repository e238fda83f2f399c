#include "operator/RunnerSupport.h"

#include <spdlog/spdlog.h>

#include <thread>

#include "events/JournalBodies.h"
#include "wal/JournalError.h"
#include "wal/RocksStorage.h"

namespace rayjournal::operator_ {

namespace {

// Opens the journal, waiting while another process holds its lock if lockWait says so.
std::unique_ptr<wal::Journal> openWaitingForLock(const std::string& dir, bool salvage,
                                                 const LockWait* lockWait) {
  wal::JournalOptions jo;
  jo.salvage = salvage;
  auto waitStarted = std::chrono::steady_clock::now();
  auto lastSaid = waitStarted;
  bool waiting = false;
  for (;;) {
    try {
      // Nothing is read while another process holds the journal: mid-write or mid-close it
      // can look damaged to a reader, and --salvage-journal would then "repair" a healthy one.
      if (lockWait) wal::RocksStorage::throwIfLockedByAnotherProcess(dir);
      auto journal = wal::Journal::open(dir, events::journalOptions(jo));
      if (waiting) {
        std::chrono::duration<double> waited = std::chrono::steady_clock::now() - waitStarted;
        spdlog::info("journal {}: the lock is ours after {:.1f} s; the other process is gone",
                     dir, waited.count());
        lockWait->onWaiting(false);
      }
      return journal;
    } catch (const wal::JournalLockedError& e) {
      if (!lockWait || !lockWait->keepWaiting()) throw;
      auto now = std::chrono::steady_clock::now();
      if (!waiting || now - lastSaid >= lockWait->remindEvery) {
        spdlog::warn("{}; waiting for it to exit before reading or acting (not ready until then)",
                     e.what());
        lastSaid = now;
      }
      if (!waiting) lockWait->onWaiting(true);
      waiting = true;
      std::this_thread::sleep_for(lockWait->poll);
    }
  }
}

}  // namespace

std::unique_ptr<wal::Journal> openJournalOrLog(const std::string& dir, bool salvage,
                                               int& exitCode, const LockWait* lockWait) {
  std::unique_ptr<wal::Journal> journal;
  exitCode = 0;
  try {
    journal = openWaitingForLock(dir, salvage, lockWait);
  } catch (const wal::JournalFullError& e) {
    spdlog::error("cannot start: the disk holding the journal is full ({}); nothing journaled "
                  "was lost: free space (or grow the volume) and start again",
                  e.what());
    exitCode = kExitJournalDiskFull;
    return nullptr;
  } catch (const wal::JournalError& e) {
    spdlog::error("cannot open the journal: {}", e.what());
    exitCode = kExitJournalUnusable;
    return nullptr;
  }
  if (journal->salvaged()) {
    const auto& s = *journal->salvaged();
    for (const auto& p : s.problems) spdlog::warn("journal salvage: {}", p);
    spdlog::warn("journal {} salvaged: every record through seq {} kept; lost seqs: {}; {} later "
                 "records kept after the first loss; checkpoint states dropped: {}; the original "
                 "is at {}",
                 dir, s.keptThrough, s.lost.empty() ? "none" : s.lost.toString(), s.keptAfterGap,
                 s.droppedCheckpoints.empty() ? "none" : s.droppedCheckpoints.toString(), s.movedTo);
  }
  return journal;
}

UpkeepOptions upkeepFor(UpkeepOptions options, runtime::Stack& stack, const Clock& clock) {
  options.nowMs = [&clock] { return clock.nowMs(); };
  options.oldestInDoubt = [&stack]() -> uint64_t {
    uint64_t oldest = 0;
    for (const auto& d : stack.projection().inDoubt())
      if (!oldest || d.intent.seq < oldest) oldest = d.intent.seq;
    return oldest;
  };
  return options;
}

HistoryUiServer startHistoryUi(const HistoryUiAddress& options, wal::Journal& journal, bool& ok) {
  ok = true;
  HistoryUiServer s;
  if (options.address.empty()) return s;
  s.ui = std::make_unique<HistoryUi>(journal);
  s.server = std::make_unique<StatusServer>(
      options.address, "the history UI",
      [ui = s.ui.get()](const std::string& target) { return ui->answer(target); });
  try {
    s.server->start();
  } catch (const std::exception& e) {
    if (options.given) {
      spdlog::error("{} (--ui-bind-address)", e.what());
      ok = false;
    } else {
      spdlog::warn("{}; running without the history UI (choose another with --ui-bind-address, "
                   "or 0 for none)", e.what());
    }
    return {};
  }
  const std::string host = options.address.substr(0, options.address.rfind(':'));
  spdlog::info("serving the history UI on http://{}:{}/ (API under /api/v1)",
               host.empty() ? "127.0.0.1" : host, s.server->port());
  return s;
}

std::unique_ptr<StatusServer> startStatusServer(const std::string& address, Metrics& metrics,
                                                std::function<bool()> ready, bool& ok,
                                                std::function<std::string()> notReadyReason) {
  ok = true;
  if (address.empty()) return nullptr;
  auto status = std::make_unique<StatusServer>(address, metrics, std::move(ready));
  if (notReadyReason) status->explainNotReady(std::move(notReadyReason));
  try {
    status->start();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    ok = false;
    return nullptr;
  }
  spdlog::info("serving /metrics, /healthz, /readyz on port {}", status->port());
  return status;
}

}  // namespace rayjournal::operator_
