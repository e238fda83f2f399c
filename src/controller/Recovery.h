// The restart path, in two steps that run before any worker starts:
//   rebuild(): the projection from the newest checkpoint plus the journal tail;
//   resolveInDoubt(): journal ControllerStarted, then resolve every in-doubt intent of either
//   controller against the authoritative world (GET the child by its journaled name, GET the
//   Ray job by its submission id, compare the RayJob or RayCluster status) and journal an
//   Outcome with resolved_after_restart = found | absent | superseded.
// The caller feeds appended records to the projection between the two (runtime::Stack does).
// Blocking; not thread-safe.
#pragma once

#include <functional>

#include "adapters/kube/KubeClient.h"
#include "adapters/ray/RayJobsClient.h"
#include "projection/JobProjection.h"
#include "wal/Journal.h"

namespace rayjournal::controller {

struct RecoveryReport {
  uint64_t checkpointSeq = 0;
  uint64_t replayedRecords = 0;
  size_t inDoubt = 0;
  size_t found = 0, absent = 0, superseded = 0;
  size_t unresolved = 0;  // Kubernetes could not be asked; left in doubt
  double seconds = 0;
};

RecoveryReport rebuild(wal::Journal& journal, projection::JobProjection& projection);
// afterResolve (simulation hook) runs after each in-doubt intent's Outcome is appended.
void resolveInDoubt(wal::Journal& journal, projection::JobProjection& projection,
                    kube::KubeClient& kube, ray::RayJobsClient& ray, RecoveryReport& report,
                    const std::function<void()>& afterResolve = {});
// rebuild, feed the projection from the journal's appends, resolveInDoubt (tools and benches
// that have no Stack).
RecoveryReport recover(wal::Journal& journal, projection::JobProjection& projection,
                       kube::KubeClient& kube, ray::RayJobsClient& ray,
                       const std::function<void()>& afterResolve = {});

}  // namespace rayjournal::controller
