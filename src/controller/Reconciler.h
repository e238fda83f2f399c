// One reconcile of one RayJob key: read the RayJob and its children (and ask Ray where the
// state needs it) → decide() → Executor. Journals drift when Kubernetes' status differs from
// what the journal last wrote, and decides from Kubernetes. Thread-safe for distinct keys.
#pragma once

#include <optional>

#include "controller/Executor.h"
#include "projection/JobProjection.h"
#include "runtime/Reconciler.h"

namespace rayjournal::controller {

// atRest: terminal, suspended, invalid, or waiting for the user.
using ReconcileResult = runtime::Result;

class Reconciler : public runtime::Reconciler {
 public:
  Reconciler(kube::KubeClient& kube, ray::RayJobsClient& ray, Executor& executor,
             projection::JobProjection& projection, wal::Journal& journal, const Clock& clock,
             DecideConfig config)
      : kube_(kube),
        ray_(ray),
        executor_(executor),
        projection_(projection),
        journal_(journal),
        clock_(clock),
        config_(config) {}

  ReconcileResult reconcile(const std::string& key) override;

 private:
  Observed observe(RayJob job);
  void checkDrift(const RayJob& job);

  kube::KubeClient& kube_;
  ray::RayJobsClient& ray_;
  Executor& executor_;
  projection::JobProjection& projection_;
  wal::Journal& journal_;
  const Clock& clock_;
  DecideConfig config_;
};

bool isAtRest(const RayJob& job);

}  // namespace rayjournal::controller
