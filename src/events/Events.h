// The typed bodies of journal records: what each controller journals and what the projection,
// rayjournal-replay and the simulator's checkers read. One struct per body, enums for every
// closed set of values; strings only where the value is a name (a target, a submission id) or
// free text (why, detail). The schema is EVENTS.md beside this file; the one place that turns
// these into bytes and back is EventCodec. Plain value types.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace rayjournal::events {

enum class Action : uint8_t {
  AddFinalizer,
  RemoveFinalizer,
  CreateRayCluster,
  CreateSubmitterJob,
  SubmitRayJob,
  StopRayJob,
  DeleteRayCluster,
  DeleteSubmitterJob,
  DeleteRayJob,
  SuspendWorkerGroups,
  CreateHeadService,
  UpdateHeadService,
  WriteStatus,
  // The RayCluster side: a cluster's own head Service and Pods.
  CreateService,
  CreatePod,
  DeletePod,
  // A token-auth RayCluster's Secret (KubeRay's reconcileAuthSecret).
  CreateSecret,
  // An autoscaling RayCluster's RBAC for the Ray autoscaler (KubeRay's common/rbac.go).
  CreateServiceAccount,
  CreateRole,
  CreateRoleBinding,
  // A GCS fault-tolerant RayCluster being deleted: the Job that empties its Redis storage
  // namespace (KubeRay's buildRedisCleanupJob).
  CreateRedisCleanupJob,
  // A RayCluster on the embedded GCS store: the claim its head Pod keeps Ray's metadata on
  // (KubeRay's reconcileGCSStoragePVC, "<cluster>-gcs-pvc").
  CreatePersistentVolumeClaim,
  // Volcano gang scheduling (--batch-scheduler volcano): the PodGroup "ray-<name>-pg" of a
  // standalone RayCluster or of a RayJob, created before the first Pod, and its minMember and
  // minResources changed when the gang does or a RayJob finishes (KubeRay's syncPodGroup).
  CreatePodGroup,
  UpdatePodGroup,
};
const std::string& actionName(Action action);
std::optional<Action> actionFromName(std::string_view name);

// How an intent ended: executed (Ok .. Abandoned) or resolved after a restart (Found ..
// Superseded).
enum class Result : uint8_t {
  Ok,           // done as intended
  Adopted,      // AlreadyExists, and the object is ours
  AlreadyDone,  // NotFound on delete, Ray already had it, the finalizer already as wanted
  Error,        // the side effect failed (detail, code)
  Abandoned,    // not run: an earlier intent of its decision failed, or leadership was lost
  Found,        // after a restart: the effect is visible
  Absent,       // after a restart: it is not; the next decision does it again, same name
  Superseded,   // after a restart: the world moved on, or Ray cannot answer
};
const std::string& resultName(Result result);
std::optional<Result> resultFromName(std::string_view name);
// The side effect is in the world (Ok, Adopted, AlreadyDone, Found).
bool landed(Result result);
bool isResolution(Result result);  // Found, Absent, Superseded

// A status field a WriteStatus intent wrote, as recovery compares it with the live status.
using StatusValue = std::variant<int64_t, std::string>;
using StatusDigest = std::map<std::string, StatusValue>;

struct IntentBody {
  Action action = Action::WriteStatus;
  std::string target;        // the child's name, the submission id, or the subject's own name
  std::string why;           // the decision's one-line reason
  StatusDigest status;       // WriteStatus: the fields written that recovery compares
  std::string submissionId;  // CreateSubmitterJob: the Ray submission id the Job will use
  std::string dashboard;     // SubmitRayJob, StopRayJob: the dashboard address
  std::string rayjob;        // RayCluster intents: "ns/name" of the RayJob owning the cluster
  bool operator==(const IntentBody&) const = default;
};

struct OutcomeBody {
  uint64_t intentSeq = 0;
  Action action = Action::WriteStatus;
  std::string target;
  Result result = Result::Ok;
  std::string detail;         // Error and Abandoned: why
  std::optional<int> code;    // Error from the API server: the HTTP code
  bool operator==(const OutcomeBody&) const = default;
};

// Observations: facts that changed a decision, journaled before it.
struct AttemptStarted {
  uint32_t attempt = 1;
  uint32_t incarnation = 1;
  std::string rayClusterName;
  std::string jobId;
  bool operator==(const AttemptStarted&) const = default;
};
struct RayJobTerminal {
  std::string status;  // Ray's job status (SUCCEEDED, FAILED, STOPPED)
  std::string jobId;
  bool operator==(const RayJobTerminal&) const = default;
};
struct Drift {
  std::string journalExpected;  // the deployment status the journal last wrote
  std::string kubernetesHas;
  std::string decision;
  bool operator==(const Drift&) const = default;
};
struct ChildMissing {
  std::string kind;  // the child's kind (Job)
  std::string name;
  std::string jobId;
  bool operator==(const ChildMissing&) const = default;
};
// K8sJobMode and SidecarMode: Ray first answered for the submission the attempt's submitter
// made (the journal's only record of it; HTTPMode journals its own SubmitRayJob). A later 404
// on the same cluster incarnation then means Ray lost the record (W8), not "not yet submitted".
struct SubmissionSeen {
  std::string jobId;
  std::string status;  // Ray's status at the sighting
  bool operator==(const SubmissionSeen&) const = default;
};
struct JournalSalvaged {
  uint64_t keptThrough = 0;
  std::string cause;
  std::string originalMovedTo;
  std::string lostRanges;  // "a-b,c-d": the seqs this salvage could not find
  uint64_t keptAfterGap = 0;
  std::string problems;  // per file, what could not be read ("; "-separated)
  std::string droppedCheckpoints;  // "a-b,...": Checkpoint records left without their state
  bool operator==(const JournalSalvaged&) const = default;
};
// A RayCluster's spec changed since the operator last wrote its status (metadata.generation past
// status.observedGeneration): who changed it, by the API server's field managers (the Ray
// autoscaler's JSON patch, a user's kubectl, the operator itself), and the worker groups' scale
// as the change left it. Journaled before the intents that follow from it.
struct SpecChanged {
  int64_t generation = 0;
  std::string changedBy;  // the field manager of the newest spec write; "" when unknown
  std::string workers;    // per group "name: replicas N[, workersToDelete a b]", "; "-separated
  bool operator==(const SpecChanged&) const = default;
};
// The object sets a field of KubeRay's schema that rayjournal does not implement: what it does
// instead. Journaled once per object and field (the projection remembers), with a Warning Event.
struct FieldIgnored {
  std::string path;     // "spec.networkPolicy", "spec.rayClusterSpec.headGroupSpec.enableIngress"
  std::string instead;  // what rayjournal does instead
  bool operator==(const FieldIgnored&) const = default;
};
using Observation = std::variant<AttemptStarted, RayJobTerminal, Drift, ChildMissing,
                                 JournalSalvaged, SubmissionSeen, SpecChanged, FieldIgnored>;
std::string_view observationName(const Observation& observation);

struct ControllerStarted {
  uint64_t epoch = 0;
  uint64_t inDoubt = 0;
  uint64_t replayed = 0;
  uint64_t checkpointSeq = 0;
  bool operator==(const ControllerStarted&) const = default;
};

struct CheckpointBody {
  uint64_t coversThrough = 0;
  uint64_t bytes = 0;
  uint32_t crc32 = 0;
  bool operator==(const CheckpointBody&) const = default;
};

}  // namespace rayjournal::events
