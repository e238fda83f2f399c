// A controller workqueue: deduplicates keys, never hands one key to two workers at once
// (a key added while processing is re-queued when done), delayed requeue, per-key
// exponential backoff for errors. Time comes from a Clock so simulations can drive it.
// Thread-safe; get() blocks until a key is ready or the queue shuts down.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "adapters/Clock.h"

namespace rayjournal::controller {

struct BackoffPolicy {
  int64_t baseMs = 5;
  int64_t maxMs = 1000 * 1000;
};

class WorkQueue {
 public:
  explicit WorkQueue(const Clock& clock, BackoffPolicy backoff = {})
      : clock_(clock), backoff_(backoff) {}

  void add(const std::string& key);
  void addAfter(const std::string& key, int64_t delayMs);
  void addRateLimited(const std::string& key);  // delay doubles per consecutive failure
  void forget(const std::string& key);          // resets the key's backoff
  int failures(const std::string& key) const;

  std::optional<std::string> get();  // nullopt once shut down
  // Never blocks: one of the keys ready now, the pick(n)-th of n in queue order (the first when
  // pick is empty), marked in progress; nullopt when none is ready. Deterministic simulation
  // steps the queue through this with a seeded pick.
  std::optional<std::string> tryGet(const std::function<size_t(size_t)>& pick = {});
  size_t ready() const;  // keys ready now (delayed keys whose time has come included)
  void done(const std::string& key);
  void shutDown();
  void wake();  // re-check delayed keys (after a simulated clock moved)

  bool idle() const;  // nothing queued, in progress or delayed
  size_t depth() const;
  // Up to max queued, in-progress or delayed keys, for logs ("ns/a (in 2900 ms)").
  std::string describe(size_t max = 5) const;
  bool pendingFor(const std::string& key) const;  // queued, in progress or delayed

 private:
  void promoteDue();

  const Clock& clock_;
  BackoffPolicy backoff_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::set<std::string> queued_;
  std::set<std::string> processing_;
  std::set<std::string> dirty_;  // added while processing
  std::multimap<int64_t, std::string> delayed_;
  std::map<std::string, int64_t> delayedAt_;
  std::map<std::string, int> failures_;
  bool shutdown_ = false;
};

}  // namespace rayjournal::controller
