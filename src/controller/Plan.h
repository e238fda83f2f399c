// What one reconcile decided: side effects to journal and execute (in order), Events to post,
// facts to journal, and when to look again. Produced by decide(), consumed by the Executor.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "adapters/ray/JobInfo.h"
#include "events/Events.h"
#include "controller/FeatureGates.h"
#include "controller/raycluster/PodDefaults.h"
#include "controller/rayjob/RayJob.h"
#include "controller/rayjob/Views.h"
#include "projection/JobFacts.h"

namespace rayjournal::controller {

using events::Action;
using events::actionFromName;
using events::actionName;

struct Intent {
  Action action;
  std::string target;        // name of the object (or submission id) acted on
  model::ApiObject object;  // the object to create, the status to write, or the request for Ray
  // Carried out even when an earlier intent of its decision failed (a RayCluster's status,
  // which must show that failure), instead of being abandoned.
  bool runsAfterFailure = false;
  // What is journaled of it (identity, not whole objects); why and rayjob are the Executor's.
  events::IntentBody journalBody() const;
};

struct EventNote {
  std::string type;  // Normal or Warning
  std::string reason;
  std::string message;
  // KubeRay's K8sEventAction: Create, Delete, Update, Validate, Reconcile (the default).
  std::string action = "Reconcile";
};

struct Plan {
  std::vector<Intent> intents;
  std::vector<EventNote> events;
  std::vector<events::Observation> observations;  // facts that changed the decision, first
  std::optional<int64_t> requeueAfterMs;  // nullopt: wait for a watch event
  std::string why;                        // one line for the log
};

// What the Ray dashboard said when the reconciler asked before deciding.
struct RayProbe {
  bool asked = false;
  bool reachable = false;
  std::optional<ray::JobInfo> info;  // nullopt with reachable: 404
  std::string error;
};

// The RayJob and its children as the cache held them, as views (Views.h); nullopt when absent.
struct Observed {
  RayJob job;
  std::optional<ClusterView> cluster;           // RayCluster status.rayClusterName
  std::optional<ServiceView> headService;       // the cluster's head Service
  std::optional<SubmitterView> submitter;       // batch Job named after the RayJob
  std::optional<ServiceView> jobHeadService;    // the RayJob-level Service <rayjob>-head-svc
  std::vector<HeadPodView> headPods;            // SidecarMode: Pods labelled as the cluster's head
  RayProbe ray;
  // Volcano: the RayJob's PodGroup as found (null: none), read only when podGroupRead (a target
  // gang in this state that the PodGroup was not seen with yet).
  bool podGroupRead = false;
  model::Document podGroup;
};

// Facts only the journal knows, from the projection.
using projection::JobFacts;

struct DecideConfig {
  int64_t requeueMs = 3000;
  // A Running RayJob's dashboard is asked at most once in this long: a reconcile sooner (most
  // often the echo of the status write its last answer caused) decides from that answer. 0: ask
  // on every reconcile, as KubeRay does.
  int64_t rayAnswerReuseMs = 1000;
  int64_t statusCheckTimeoutMs = 300000;
  int64_t transitionGracePeriodMs = 300000;
  int64_t submitterFinishedTimeoutMs = 30000;
  // W9: a deleted RayJob's Ray job is stopped at least maxStopAttempts times and for at least
  // stopConfirmTimeoutMs after the deletion, until Ray confirms it; then the finalizer goes.
  int maxStopAttempts = 3;
  int64_t stopConfirmTimeoutMs = 60000;
  bool deleteRayJobAfterJobFinishes = false;
  std::string clusterDomain = "cluster.local";
  FeatureGates gates;
  // KubeRay's ENABLE_LOGIN_SHELL: the submitter's bash runs as a login shell (-cel), and so do
  // the Ray containers' (-cl) that the RayCluster side starts.
  bool loginShell = false;
  bool injectProbes = true;         // ENABLE_PROBES_INJECTION (RayCluster Pods)
  bool injectWaitGcsReady = true;   // ENABLE_INIT_CONTAINER_INJECTION (worker Pods)
  bool randomPodDelete = false;     // ENABLE_RANDOM_POD_DELETE (autoscaling RayClusters)
  bool redisCleanup = true;         // ENABLE_GCS_FT_REDIS_CLEANUP (GCS fault-tolerant RayClusters)
  // KubeRay's configuration file (`--config`): what every RayCluster Pod gets (null: nothing).
  std::shared_ptr<const PodDefaults> podDefaults;
  // --batch-scheduler: "" (none) or "volcano" (PodGroups and their Pod fields).
  std::string batchScheduler;
};

}  // namespace rayjournal::controller
