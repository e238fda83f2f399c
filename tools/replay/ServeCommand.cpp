// rayjournal-replay serve: the history UI (operator/HistoryUi.h) over a journal directory, a
// copy or the live one beside a running operator (read as a follower: it shows new records as
// the operator writes them).
#include <signal.h>

#include <iostream>

#include "ReplayCommon.h"
#include "operator/HistoryUi.h"
#include "operator/StatusServer.h"

namespace rayjournal::replay {

int serve(const std::string& dir, const std::string& address, std::ostream& out) {
  // Blocked before any thread starts, so that every thread leaves them to sigwait below.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGINT);
  sigaddset(&stopSignals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
  return guarded(out, [&] {
    auto journal = openFollowing(dir);
    operator_::HistoryUi ui(*journal);
    operator_::StatusServer server(address, "the history UI",
                                   [&ui](const std::string& target) { return ui.answer(target); });
    try {
      server.start();
    } catch (const std::exception& e) {
      out << "rayjournal-replay: " << e.what() << "\n";
      return 2;
    }
    const std::string host = address.substr(0, address.rfind(':'));
    out << "serving the history UI of journal " << dir << " on http://"
        << (host.empty() ? "127.0.0.1" : host) << ":" << server.port()
        << "/ (API under /api/v1; Ctrl-C stops)" << std::endl;
    int signal = 0;
    sigwait(&stopSignals, &signal);
    server.stop();
    return 0;
  });
}

}  // namespace rayjournal::replay
