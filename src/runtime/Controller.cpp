#include "runtime/Controller.h"

#include <spdlog/spdlog.h>

#include <chrono>

namespace rayjournal::runtime {

Controller::Controller(Reconciler& reconciler, const Clock& clock, ControllerOptions options)
    : reconciler_(reconciler), options_(std::move(options)), queue_(clock) {}

Controller::~Controller() {
  stop();
}

void Controller::start() {
  for (int i = 0; i < options_.workers; ++i) threads_.emplace_back([this] { worker(); });
}

void Controller::stop() {
  if (stopped_.exchange(true)) return;
  queue_.shutDown();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void Controller::worker() {
  while (auto key = queue_.get()) process(*key);
}

bool Controller::runOne(const std::function<size_t(size_t)>& pick) {
  auto key = queue_.tryGet(pick);
  if (!key) return false;
  process(*key);
  return true;
}

// controller-runtime's reconcileHandler: error -> rate-limited requeue; requeueAfter -> forget
// and requeue later; otherwise forget. done() always, so a key added meanwhile runs again.
void Controller::process(const std::string& key) {
  if (options_.mayReconcile && !options_.mayReconcile(key)) {
    queue_.done(key);
    queue_.addAfter(key, 1000);
    return;
  }
  Result result;
  auto began = std::chrono::steady_clock::now();
  try {
    result = reconciler_.reconcile(key);
  } catch (const std::exception& e) {
    spdlog::error("{} {}: reconcile failed: {}", options_.name, key, e.what());
    result.error = true;
  }
  ++reconciles_;
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  if (options_.onResult) options_.onResult(key, result, seconds);
  if (result.error) {
    queue_.addRateLimited(key);
  } else {
    queue_.forget(key);
    if (result.requeueAfterMs) queue_.addAfter(key, *result.requeueAfterMs);
  }
  queue_.done(key);
}

}  // namespace rayjournal::runtime
