#include "operator/RunnerSupport.h"

#include <spdlog/spdlog.h>

#include "events/JournalBodies.h"
#include "wal/JournalError.h"

namespace rayjournal::operator_ {

std::unique_ptr<wal::Journal> openJournalOrLog(const std::string& dir, bool salvage,
                                               int& exitCode) {
  std::unique_ptr<wal::Journal> journal;
  exitCode = 0;
  try {
    wal::JournalOptions jo;
    jo.salvage = salvage;
    journal = wal::Journal::open(dir, events::journalOptions(jo));
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
                 "records kept after the first loss; the original is at {}",
                 dir, s.keptThrough, s.lost.empty() ? "none" : s.lost.toString(), s.keptAfterGap,
                 s.movedTo);
  }
  return journal;
}

JournalWatch::JournalWatch(wal::Journal& journal, std::chrono::milliseconds reminder)
    : journal_(journal), reminder_(reminder), thread_([this] { run(); }) {}

JournalWatch::~JournalWatch() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void JournalWatch::run() {
  std::unique_lock lock(mu_);
  bool down = false;
  auto lastSaid = std::chrono::steady_clock::now();
  while (!cv_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stopping_; })) {
    auto state = journal_.unwritable();
    auto now = std::chrono::steady_clock::now();
    if (state && (!down || now - lastSaid >= reminder_)) {
      spdlog::warn("journal {} cannot be written{}: {}; no side effect executes until it can "
                   "(/readyz is unready); retrying by itself",
                   journal_.describe(), state->diskFull ? " (disk full)" : "", state->cause);
      lastSaid = now;
    } else if (!state && down) {
      spdlog::info("journal {} is writable again; resuming", journal_.describe());
    }
    down = state.has_value();
  }
}

std::unique_ptr<StatusServer> startStatusServer(const std::string& address, Metrics& metrics,
                                                std::function<bool()> ready, bool& ok) {
  ok = true;
  if (address.empty()) return nullptr;
  auto status = std::make_unique<StatusServer>(address, metrics, std::move(ready));
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
