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
