// Facts only the journal knows about one RayJob, as the projection hands them to the decision.
// Plain value type.
#pragma once

#include <cstdint>
#include <set>
#include <string>

namespace rayjournal::projection {

struct JobFacts {
  uint32_t nextIncarnation = 1;        // salt for fresh identities
  // Submissions of this cluster incarnation that Ray confirmed: HTTPMode's journaled POSTs, the
  // other modes' sightings (SubmissionSeen).
  std::set<std::string> submittedIds;
  int stopAttempts = 0;                // StopRayJob intents for the current submission
  int64_t firstStartMs = 0;
  // HTTPMode: why the attempt's last SubmitRayJob failed; empty when it landed or none failed.
  std::string lastSubmitError;
};

}  // namespace rayjournal::projection
