#include "runtime/Controller.h"

#include <spdlog/spdlog.h>

#include "wal/JournalError.h"

#include <algorithm>
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
  while (auto key = queue_.get()) {
    std::vector<std::string> batch{std::move(*key)};
    while (batch.size() < options_.maxBatch) {
      auto more = queue_.tryGet();
      if (!more) break;
      batch.push_back(std::move(*more));
    }
    process(std::move(batch));
  }
}

bool Controller::runOne(const std::function<size_t(size_t)>& pick, size_t count) {
  std::vector<std::string> batch;
  while (batch.size() < std::max<size_t>(count, 1)) {
    auto key = queue_.tryGet(pick);
    if (!key) break;
    batch.push_back(std::move(*key));
  }
  if (batch.empty()) return false;
  process(std::move(batch));
  return true;
}

void Controller::process(std::vector<std::string> keys) {
  // A key it may not act on now is looked at again a second later.
  std::erase_if(keys, [this](const std::string& key) {
    if (!options_.mayReconcile || options_.mayReconcile(key)) return false;
    queue_.done(key);
    queue_.addAfter(key, 1000);
    return true;
  });
  if (keys.empty()) return;
  std::vector<Result> results;
  auto began = std::chrono::steady_clock::now();
  try {
    results = reconciler_.reconcileMany(keys);
  } catch (const wal::JournalFullError& e) {
    // Reported once per interval by the operator's journal watch, not once per key.
    spdlog::debug("{} {}: deferred, the journal cannot be written: {}", options_.name,
                  keys.front(), e.what());
    results.assign(keys.size(), Result{true, std::nullopt, false});
  } catch (const std::exception& e) {
    spdlog::error("{} {}{}: reconcile failed: {}", options_.name, keys.front(),
                  keys.size() > 1 ? " (and " + std::to_string(keys.size() - 1) + " more)" : "",
                  e.what());
    results.assign(keys.size(), Result{true, std::nullopt, false});
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  for (size_t i = 0; i < keys.size(); ++i) handle(keys[i], results.at(i), seconds);
}

// controller-runtime's reconcileHandler: error -> rate-limited requeue; requeueAfter -> forget
// and requeue later; otherwise forget. done() always, so a key added meanwhile runs again.
void Controller::handle(const std::string& key, const Result& result, double seconds) {
  ++reconciles_;
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
