// Per-RayJob facts folded from the journal: attempts and their identities, first and current
// attempt start, every intent with its outcome, in-doubt intents, confirmed Ray submissions,
// stop requests, last observed Ray and deployment status, drift. Keyed by namespace/name.
// Per RayCluster it keeps what the RayCluster side needs: its intents and which are in doubt.
// Thread-safe (one mutex); appliedThrough() is the highest seq folded in.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <vector>

#include "events/Events.h"
#include "projection/JobFacts.h"
#include "projection/Projection.h"

namespace rayjournal::projection {

using nlohmann::json;

struct IntentFact {
  uint64_t seq = 0;
  events::Action action = events::Action::WriteStatus;
  std::string target;
  uint32_t attempt = 0;
  int64_t timeMs = 0;
  uint64_t epoch = 0;
  std::optional<events::Result> outcome;  // nullopt while in doubt
  events::StatusDigest status;            // WriteStatus: the journaled status fields
};

struct AttemptFact {
  uint32_t attempt = 0;
  uint32_t incarnation = 0;
  std::string rayClusterName;
  std::string jobId;
  int64_t startMs = 0;
};

struct JobState {
  std::string uid;
  uint32_t attempt = 0;
  uint32_t incarnations = 0;
  int64_t firstStartMs = 0;
  int64_t attemptStartMs = 0;
  std::vector<AttemptFact> attempts;
  std::map<uint64_t, IntentFact> intents;
  std::set<uint64_t> inDoubt;
  // Of the current attempt (cleared when one starts): submission id -> time confirmed, and
  // submission id -> StopRayJob intents.
  std::map<std::string, int64_t> submissions;
  std::map<std::string, int> stopRequests;
  std::string lastRayStatus;
  std::string lastDeploymentStatus;  // from the last status write known to have landed
  int drifts = 0;
  // RayClusters: the last Pod create or delete that failed, until a later one lands (KubeRay's
  // RayClusterReplicaFailure condition). Reason as KubeRay's (FailedCreateHeadPod, ...);
  // message: the reason, a newline, the error (Go's errors.Join), at most kMaxFailureMessage.
  std::string replicaFailureReason;
  std::string replicaFailureMessage;
  // RayJobs: the error of the current attempt's last failed SubmitRayJob, until one lands.
  std::string lastSubmitError;
  // RayJobs: attempts that ended Retrying, as {failed count before, ms from the attempt's start
  // to the Retrying write} (KubeRay's Retrying series of its execution-duration metric); the
  // last kMaxRetriedAttempts.
  std::vector<std::pair<int, int64_t>> retried;
};

inline constexpr size_t kMaxRetriedAttempts = 16;

inline constexpr size_t kMaxFailureMessage = 1024;

// The projection's whole state, as a checkpoint holds it.
struct ProjectionStates {
  std::map<std::string, JobState> jobs;      // RayJobs by "ns/name"
  std::map<std::string, JobState> clusters;  // RayClusters by "ns/name" (uid, intents, inDoubt)
};

// One intent without an outcome, with the object it acted for.
struct InDoubtIntent {
  std::string kind;  // RayJob or RayCluster
  std::string key;   // "ns/name"
  std::string uid;
  IntentFact intent;
};

class JobProjection : public Projection {
 public:
  void apply(const wal::Record& record) override;
  std::string checkpoint() const override;
  void restore(const std::string& bytes) override;

  uint64_t appliedThrough() const;
  // checkpoint() and the seq it covers, taken together.
  std::pair<std::string, uint64_t> snapshot() const;
  std::optional<JobState> job(const std::string& key) const;
  JobFacts facts(const std::string& key, const std::string& currentJobId) const;
  // Every intent still in doubt, with the key of its RayJob.
  std::vector<InDoubtIntent> inDoubt() const;
  // The attempt of RayJob jobKey whose RayCluster is clusterName; 0 when none is journaled.
  uint32_t attemptOfCluster(const std::string& jobKey, const std::string& clusterName) const;
  std::optional<JobState> cluster(const std::string& key) const;
  // The RayCluster's last failed Pod create/delete {reason, message}, when that cluster (uid)
  // has one; without copying its state (every RayCluster pass asks).
  std::pair<std::string, std::string> replicaFailure(const std::string& key,
                                                     const std::string& uid) const;
  size_t jobCount() const;
  // The RayJob's attempts that ended Retrying (JobState::retried); empty when none or unknown.
  std::vector<std::pair<int, int64_t>> retriedAttempts(const std::string& key) const;
  json toJson(const std::string& key = "") const;

 private:
  void applyIntent(JobState& job, const wal::Record& r);
  void applyOutcome(JobState& job, const wal::Record& r);
  void applyObservation(JobState& job, const wal::Record& r);
  static void noteRetried(JobState& job, const IntentFact& f, int64_t atMs);
  static void notePodOutcome(JobState& cluster, const std::string& clusterName,
                             const IntentFact& f, const events::OutcomeBody& body);

  mutable std::mutex mu_;
  std::map<std::string, JobState> jobs_;
  std::map<std::string, JobState> clusters_;
  uint64_t appliedThrough_ = 0;
};

}  // namespace rayjournal::projection
