// Carries out a Plan the write-ahead way, for either controller: the plan's observations and
// intents are appended in one synced batch before anything is executed; the intents are then
// executed in order through the adapters and their Outcomes appended together, lazily (a lost
// Outcome leaves its intent in doubt, resolved at the next start). Idempotent under
// deterministic identities: AlreadyExists on create is adoption when the object is ours (a
// foreign object is an error with an Event, never adopted), NotFound on delete is done, Ray
// "already exists" is done. Every Kubernetes write and Ray call the operator makes goes through
// here; nothing else in the operator writes (the simulator's checkers hold it to that).
// Thread-safe for different keys; blocks on the journal and the adapters.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "adapters/Clock.h"
#include "adapters/kube/EventRecorder.h"
#include "adapters/kube/KubeClient.h"
#include "adapters/ray/RayJobsClient.h"
#include "controller/Plan.h"
#include "wal/Journal.h"

namespace rayjournal::controller {

// The object a decision is about: its records carry this identity and its Events regard it.
struct Subject {
  std::string kind;  // RayJob or RayCluster
  std::string ns, name, uid;
  uint32_t attempt = 0;       // the RayJob attempt these records belong to (0: none known)
  std::string parent;         // a RayCluster's owning RayJob "ns/name" (empty: none)
  std::string shardKey;       // the RayJob key whose shard acts for it
  kube::Snapshot raw;         // the object as read: status and finalizer writes start from it
  std::string key() const { return ns + "/" + name; }
};
Subject subjectOf(const RayJob& job);

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
  ExecResult execute(const Subject& subject, Plan& plan);
  // The decisions of several subjects at once: every observation and intent of all of them in one
  // synced append (one fsync serves the batch), then each plan executed in order, then all the
  // outcomes in one lazy append. A failing intent abandons the rest of its own plan only.
  struct Decision {
    const Subject* subject;
    Plan* plan;
  };
  std::vector<ExecResult> executeAll(const std::vector<Decision>& decisions);
  ExecResult execute(const RayJob& job, Plan& plan) { return execute(subjectOf(job), plan); }
  // Events go through the recorder when one is set (off the reconcile path), else inline.
  void setEventRecorder(kube::EventRecorder* recorder) { events_ = recorder; }
  // false: only Warning Events reach Kubernetes (--events warnings); the Normal ones (a child
  // created or deleted as planned) stay in the journal, as every intent and outcome does.
  void postNormalEvents(bool post) { normalEvents_ = post; }
  // Posts a Kubernetes Event about the subject (best effort: a failure is only logged).
  void postEvent(const Subject& subject, const EventNote& note);
  void postEvent(const RayJob& job, const EventNote& note) { postEvent(subjectOf(job), note); }
  // Simulation hook at the journal boundaries of each intent; a crash simulation throws from it.
  enum class Stage { IntentDurable, Executed, OutcomeJournaled };
  std::function<void(Stage, const Intent&, uint64_t intentSeq)> hook;
  // When set and false for the subject's shard key, no intent is executed (journaled as
  // abandoned): leadership or the shard's Lease was lost.
  std::function<bool(const std::string& shardKey)> mayAct;

 private:
  // Returns how it was done (Ok, Adopted, AlreadyDone); throws on failure.
  events::Result run(const Subject& s, Intent& intent, kube::Snapshot& current);
  events::Result runRay(Intent& intent);
  events::Result create(const Subject& s, const std::string& kind, Intent& intent);
  events::Result removeChild(const Subject& s, const std::string& kind, const std::string& name);
  events::Result changeFinalizer(const Subject& s, bool add, kube::Snapshot& current);
  events::Result suspendWorkers(const Subject& s, Intent& intent);
  events::Result updateHeadService(const Subject& s, Intent& intent);
  events::OutcomeBody outcomeOf(const Subject& s, Intent& intent, uint64_t seq,
                                ExecResult& result, kube::Snapshot& current);
  wal::Record recordFor(const Subject& s, wal::RecordType type, std::string body) const;

  wal::Journal& journal_;
  kube::KubeClient& kube_;
  kube::EventRecorder* events_ = nullptr;
  bool normalEvents_ = true;
  ray::RayJobsClient& ray_;
  const Clock& clock_;
  std::atomic<uint64_t> eventCounter_{0};
};

}  // namespace rayjournal::controller
