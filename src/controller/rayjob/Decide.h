// The RayJob decision: one pure function per reconcile, level-triggered. It reads only its
// arguments (no I/O, no clock), so the same inputs always give the same Plan; that is what the
// deterministic simulation relies on.
#pragma once

#include "controller/Plan.h"

namespace rayjournal::controller {

Plan decide(const Observed& observed, const JobFacts& facts, int64_t nowMs,
            const DecideConfig& config);

}  // namespace rayjournal::controller
