// The contract between the runtime and a controller, as controller-runtime's reconcile.go:
// reconcile(key) is level-triggered: it reads the current state of the object named by key
// ("namespace/name") and its children, and acts to move the world toward the desired state. The
// key carries no event and no object content: whatever triggered it, the answer is the same.
//   - error: the runtime requeues the key with per-key exponential backoff;
//   - requeueAfterMs: the runtime forgets the key's backoff and looks again after the delay;
//   - neither: the key waits for the next watch event that maps to it.
// A reconcile of one key never runs on two workers at once; different keys run concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rayjournal::runtime {

struct Result {
  bool error = false;
  std::optional<int64_t> requeueAfterMs;
  // Nothing for this key to do until the world changes (terminal, suspended, waiting for the
  // user); what `--exit-when-idle` waits for.
  bool atRest = true;
};

class Reconciler {
 public:
  virtual ~Reconciler() = default;
  // Throws only for what it cannot handle; the runtime treats a throw as an error result.
  virtual Result reconcile(const std::string& key) = 0;
  // Reconciles distinct keys that one worker took together, one result per key in order. Each
  // key gets exactly what reconcile(key) would give it; a reconciler that journals may let one
  // durable write carry the intents of all of them (group commit at the decision level). A
  // throw fails every key of the batch. The default runs them one by one.
  virtual std::vector<Result> reconcileMany(const std::vector<std::string>& keys) {
    std::vector<Result> results;
    results.reserve(keys.size());
    for (const auto& key : keys) results.push_back(reconcile(key));
    return results;
  }
};

}  // namespace rayjournal::runtime
