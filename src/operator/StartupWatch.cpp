#include "operator/StartupWatch.h"

#include <spdlog/spdlog.h>

#include <cstdlib>

namespace rayjournal::operator_ {

StartupWatch::StartupWatch(std::function<int()> signalReceived, std::chrono::milliseconds every,
                           std::function<void(int)> exitNow)
    : signalReceived_(std::move(signalReceived)),
      every_(every),
      exitNow_(exitNow ? std::move(exitNow) : [](int code) { std::_Exit(code); }) {
  thread_ = std::thread([this] { watch(); });
}

StartupWatch::~StartupWatch() {
  running();
}

void StartupWatch::phase(std::string what, bool stopsOnSignal) {
  std::lock_guard lock(mu_);
  spdlog::debug("start-up: {}", what);
  phase_ = std::move(what);
  stopsOnSignal_ = stopsOnSignal;
  phaseSince_ = std::chrono::steady_clock::now();
}

void StartupWatch::running() {
  {
    std::lock_guard lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void StartupWatch::watch() {
  auto lastLog = std::chrono::steady_clock::now();
  std::unique_lock lock(mu_);
  while (!done_) {
    cv_.wait_for(lock, std::chrono::milliseconds(50));
    if (done_) return;
    auto now = std::chrono::steady_clock::now();
    if (int signal = stopsOnSignal_ ? 0 : signalReceived_()) {
      spdlog::warn("signal {} during start-up while {}: exiting now (the journal is crash-safe; "
                   "the next start resolves anything in flight)",
                   signal, phase_);
      spdlog::default_logger()->flush();
      exitNow_(0);
      return;
    }
    if (now - lastLog >= every_ && now - phaseSince_ >= every_) {
      lastLog = now;
      spdlog::info("start-up: still {} ({} s)", phase_,
                   std::chrono::duration_cast<std::chrono::seconds>(now - phaseSince_).count());
    }
  }
}

}  // namespace rayjournal::operator_
