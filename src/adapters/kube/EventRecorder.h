// Posts Kubernetes Events off the reconcile path, as client-go's event broadcaster does for
// KubeRay: post() queues what the Event says (an EventDraft) and returns at once; `posters`
// threads take the queued drafts oldest first, up to kMaxBatch at a time, build their
// events.k8s.io/v1 objects and create them pipelined on one connection (KubeClient::postAll):
// one write and a few reads for a batch instead of a round trip each, so two posters keep up
// with the reconcilers under load. A draft is described only when its create fails.
// An Event is best effort (KubeRay's recorder drops them when its queue of 1000 is full, and
// never makes a reconcile wait for one), so a full queue drops the new Event and counts it,
// and a failed create is logged, not retried (but for the API server's 429, which post()
// retries with backoff). The journal, not Events, is the record of what the operator did.
// Thread-safe. Lifetime: the KubeClient must outlive this object; the destructor stops after
// the queue is drained or `drainTimeout` passed, whichever is first.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "adapters/kube/KubeClient.h"

namespace rayjournal::kube {

// What one Event says, as a reconciler knows it.
struct EventDraft {
  std::string name;                       // metadata.name, unique per Event
  std::string kind, ns, objectName, uid;  // the ray.io/v1 object it regards
  std::string reason, note, type, action;
  std::string reportingController, reportingInstance;
  int64_t eventTimeMs = 0;
};

// The events.k8s.io/v1 Event of a draft.
nlohmann::json eventObject(const EventDraft& draft);
// "Reason for Kind ns/name", for logs.
std::string describe(const EventDraft& draft);

class EventRecorder {
 public:
  EventRecorder(KubeClient& kube, size_t capacity = 1000, int posters = 2,
                std::chrono::milliseconds drainTimeout = std::chrono::milliseconds(5000));
  ~EventRecorder();
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // Never blocks on the API server.
  void post(EventDraft event);
  // Blocks until every Event queued so far was created (or failed).
  void flush();
  uint64_t dropped() const { return dropped_; }
  uint64_t posted() const { return posted_; }
  // Drafts one poster creates at once: the requests of a batch (about 700 bytes each) and their
  // answers stay well inside the sockets' buffers while one side writes all before it reads.
  static constexpr size_t kMaxBatch = 32;

 private:
  void run();
  // One create for each draft, pipelined on one connection; each failure logged.
  void postBatch(const std::vector<EventDraft>& batch);

  KubeClient& kube_;
  const size_t capacity_;
  const std::chrono::milliseconds drainTimeout_;
  std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::deque<EventDraft> queue_;
  int busy_ = 0;  // posters creating an Event now
  bool stopping_ = false;
  std::atomic<uint64_t> dropped_{0}, posted_{0};
  std::vector<std::thread> threads_;
};

}  // namespace rayjournal::kube
