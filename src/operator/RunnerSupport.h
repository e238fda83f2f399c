// Start-up steps both runners (embedded and real cluster) share: opening the journal with the
// user-facing messages, and starting the metrics/probe server. Blocking; not thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "operator/StatusServer.h"
#include "wal/Journal.h"

namespace rayjournal::operator_ {

// Logs why and returns nullptr when the journal cannot be opened (exit code 3); logs a salvage.
std::unique_ptr<wal::Journal> openJournalOrLog(const std::string& dir, bool salvage);

// nullptr with ok=true when address is empty; nullptr with ok=false (logged) when it cannot bind.
std::unique_ptr<StatusServer> startStatusServer(const std::string& address, Metrics& metrics,
                                                std::function<bool()> ready, bool& ok);

}  // namespace rayjournal::operator_
