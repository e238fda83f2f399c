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
#include <string>
#include <string_view>
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
  // RayClusters: per worker group, one past the highest worker index a journaled CreatePod
  // named, so a replacement gets a name no earlier worker had (KubeRay's are generated; Ray's
  // autoscaler tells nodes apart by Pod name). At most kMaxWorkerGroupsKept groups.
  std::map<std::string, uint64_t> nextWorkerIndex;
  // The KubeRay fields this object sets that rayjournal does not implement and has warned about
  // (a FieldIgnored observation each), by path; at most kMaxIgnoredFieldsKept.
  std::set<std::string> ignoredFields;
};

inline constexpr size_t kMaxIgnoredFieldsKept = 256;

inline constexpr size_t kMaxWorkerGroupsKept = 256;

inline constexpr size_t kMaxRetriedAttempts = 16;

inline constexpr size_t kMaxFailureMessage = 1024;

// The projection's whole state, as a checkpoint holds it.
struct ProjectionStates {
  std::map<std::string, JobState> jobs;      // RayJobs by "ns/name"
  std::map<std::string, JobState> clusters;  // RayClusters by "ns/name" (uid, intents, inDoubt)
};

// One state of an RJP5 checkpoint, not decoded: views into the checkpoint's bytes, which the
// holder keeps alive.
struct EncodedState {
  std::string_view key;
  std::string_view body;
  bool inDoubt = false;  // the state has intents in doubt
  bool taken = false;    // decoded by the holder since: encoded elsewhere from now on
};
struct EncodedStates {
  std::vector<EncodedState> jobs, clusters;  // in key order
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
  // An RJP5 checkpoint is split, not decoded: each state is decoded when first read or applied
  // to, and one that never is is written to the next checkpoint as it was read.
  void restore(std::string bytes) override;

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
  // The RayCluster's per-group first fresh worker index (JobState::nextWorkerIndex) when that
  // cluster (uid) has any; without copying its state.
  std::map<std::string, uint64_t> nextWorkerIndex(const std::string& key,
                                                  const std::string& uid) const;
  // The unimplemented fields the object (kind, key, uid) was warned about (JobState::ignoredFields).
  std::set<std::string> ignoredFields(const std::string& kind, const std::string& key,
                                      const std::string& uid) const;
  size_t jobCount() const;
  // The RayJob's attempts that ended Retrying (JobState::retried); empty when none or unknown.
  std::vector<std::pair<int, int64_t>> retriedAttempts(const std::string& key) const;
  json toJson(const std::string& key = "") const;

 private:
  void applyIntent(JobState& job, const wal::Record& r);
  void applyOutcome(JobState& job, const wal::Record& r);
  void applyObservation(JobState& job, const wal::Record& r);
  static void noteWorkerName(JobState& cluster, const std::string& clusterName,
                             const IntentFact& f);
  static void noteRetried(JobState& job, const IntentFact& f, int64_t atMs);
  static void notePodOutcome(JobState& cluster, const std::string& clusterName,
                             const IntentFact& f, const events::OutcomeBody& body);

  using States = std::map<std::string, JobState>;
  // The state of key, decoded from the restored checkpoint when first asked for; nullptr when
  // neither holds it. Under mu_.
  JobState* find(States& states, std::vector<EncodedState>& encoded, const std::string& key) const;
  // find(), for a reader: the checkpoint's bytes go once nothing is left in them.
  const JobState* read(States& states, std::vector<EncodedState>& encoded,
                       const std::string& key) const;
  JobState& findOrAdd(States& states, std::vector<EncodedState>& encoded, const std::string& key);
  // Decodes one encoded state into states.
  JobState& take(States& states, EncodedState& encoded) const;
  // Decodes the states still encoded (those flagged in doubt, or all) for walks over them.
  void decodeEncoded(bool inDoubtOnly) const;
  // Lets go of the checkpoint's bytes once every state in them was decoded.
  void releaseIfAllDecoded() const;
  void dropEncoded() const;

  mutable std::mutex mu_;
  // The decoded states. Reads decode a state into them on first use, hence mutable.
  mutable States jobs_;
  mutable States clusters_;
  // The states of the restored RJP5 checkpoint not decoded yet, and the bytes they point into.
  mutable EncodedStates encoded_;
  mutable std::string encodedBytes_;
  mutable size_t stillEncoded_ = 0;
  uint64_t appliedThrough_ = 0;
};

}  // namespace rayjournal::projection
