// The one generic worker loop, serving any Reconciler (controller-runtime's Controller): keys
// come in through enqueue() (from watch handlers), the WorkQueue deduplicates them and never
// hands one key to two workers; each result is turned into forget / delayed requeue / backoff.
// A worker takes the key it waited for plus up to maxBatch - 1 more that are ready at that moment,
// and hands them to the reconciler together (reconcileMany: one journal flush for all of their
// intents); with a short queue that is one key, so batching adds no wait.
// Threaded (start() runs `workers` threads) or stepped (workers == 0: runOne() processes ready
// keys on the caller's thread, which is how the deterministic simulator drives it).
// Thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "adapters/Clock.h"
#include "controller/WorkQueue.h"
#include "runtime/Reconciler.h"

namespace rayjournal::runtime {

struct ControllerOptions {
  std::string name;  // for logs: "RayJob", "RayCluster"
  int workers = 1;   // 0: stepped by runOne()
  size_t maxBatch = 16;  // keys one worker reconciles together (1: one at a time)
  // A key it may not act on now (its shard's Lease is not held) is looked at again a second later.
  std::function<bool(const std::string& key)> mayReconcile;
  // After every reconcile, with its duration; must be cheap and thread-safe.
  std::function<void(const std::string& key, const Result& result, double seconds)> onResult;
};

class Controller {
 public:
  Controller(Reconciler& reconciler, const Clock& clock, ControllerOptions options);
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  void start();  // starts the worker threads; returns at once
  void stop();   // shuts the queue down and joins the workers; idempotent
  void enqueue(const std::string& key) { queue_.add(key); }
  // Stepped mode: processes `count` ready keys as one batch (each the pick(n)-th of the n still
  // ready); false when none is ready.
  bool runOne(const std::function<size_t(size_t)>& pick = {}, size_t count = 1);
  controller::WorkQueue& queue() { return queue_; }
  const controller::WorkQueue& queue() const { return queue_; }
  uint64_t reconciles() const { return reconciles_; }

 private:
  void worker();
  void process(std::vector<std::string> keys);
  void handle(const std::string& key, const Result& result, double seconds);

  Reconciler& reconciler_;
  ControllerOptions options_;
  controller::WorkQueue queue_;
  std::vector<std::thread> threads_;
  std::atomic<uint64_t> reconciles_{0};
  std::atomic<bool> stopped_{false};
};

}  // namespace rayjournal::runtime
