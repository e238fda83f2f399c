// The RayJob decision: one pure function per reconcile, level-triggered. It reads only its
// arguments (no I/O, no clock), so the same inputs always give the same Plan; that is what the
// deterministic simulation relies on.
#pragma once

#include <optional>

#include "controller/Plan.h"
#include "controller/Volcano.h"

namespace rayjournal::controller {

// --batch-scheduler volcano: the gang the RayJob's PodGroup "ray-<job>-pg" should have in the
// RayJob's present state (its cluster's and its submitter's while it starts; what is left of
// its cluster once it finished or its children are gone: KubeRay's CleanupOnCompletion), or
// nullopt where the state leaves the PodGroup alone. A clusterSelector RayJob has none: its
// cluster is not its own (KubeRay refuses such a RayJob for ever; rayjournal runs it).
std::optional<Gang> rayJobPodGroupTarget(const Observed& observed, const DecideConfig& config);

Plan decide(const Observed& observed, const JobFacts& facts, int64_t nowMs,
            const DecideConfig& config);

}  // namespace rayjournal::controller
