// Carries out a Plan the write-ahead way: the plan's observations and intents are appended
// in one synced batch before anything is executed; each intent is then executed through the
// adapters and its Outcome appended (lazily). Idempotent under deterministic identities:
// AlreadyExists on create is adoption when the object is ours (a foreign object is an error
// with an Event, never adopted), NotFound on delete is done, Ray "already exists" is done.
// Thread-safe for different keys; blocks on the journal and the adapters.
#pragma once

#include <atomic>
#include <string>

#include "adapters/Clock.h"
#include "adapters/kube/KubeClient.h"
#include "adapters/ray/RayJobsClient.h"
#include "controller/Plan.h"
#include "wal/Journal.h"

namespace rayjournal::controller {

struct ExecResult {
  bool ok = true;
  std::string error;  // the first failing intent and its cause
  int executed = 0;
};

class Executor {
 public:
  Executor(wal::Journal& journal, kube::KubeClient& kube, ray::RayJobsClient& ray,
           const Clock& clock)
      : journal_(journal), kube_(kube), ray_(ray), clock_(clock) {}

  // Consumes the intents' objects (moved into the API calls); actions and targets stay.
  ExecResult execute(const RayJob& job, Plan& plan);
  // Posts a Kubernetes Event about the RayJob (best effort: a failure is only logged).
  void postEvent(const RayJob& job, const EventNote& note);
  // Simulation hook at the journal boundaries of each intent; a crash simulation throws from it.
  enum class Stage { IntentDurable, Executed, OutcomeJournaled };
  std::function<void(Stage, const Intent&, uint64_t intentSeq)> hook;
  // When set and false, no intent is executed (journaled as abandoned): leadership was lost.
  std::function<bool(const RayJob& job)> mayAct;

 private:
  // Returns the outcome result ("ok", "adopted", "already_done"); throws on failure.
  std::string run(const RayJob& job, Intent& intent, std::shared_ptr<const json>& current);
  std::string create(const RayJob& job, const std::string& kind, Intent& intent);
  std::string removeChild(const RayJob& job, const std::string& kind, const std::string& name);
  std::string changeFinalizer(const RayJob& job, bool add, std::shared_ptr<const json>& current);
  wal::Record recordFor(const RayJob& job, wal::RecordType type, json body) const;

  wal::Journal& journal_;
  kube::KubeClient& kube_;
  ray::RayJobsClient& ray_;
  const Clock& clock_;
  std::atomic<uint64_t> eventCounter_{0};
};

}  // namespace rayjournal::controller
