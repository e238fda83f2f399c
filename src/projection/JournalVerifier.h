// Checks a whole journal history for soundness (what `rayjournal-replay verify` reports):
// gap-free seqs; every Outcome answers an earlier Intent; no side effect executed twice for the
// same identity (one RayCluster create per name, one submitter Job create per attempt, one Ray
// submission per submission id); attempts only grow, and only after a Retrying status write;
// a restart never starts an attempt; every checkpoint equals the projection replayed up to it;
// the journal reaches its high-water mark; the per-object index matches the records both ways.
// Seqs a salvage recorded as lost are skipped and reported, and rules whose evidence may have
// been in them are not applied across them; checkpoint states a salvage dropped are reported.
// Streams the journal; memory grows with the number of RayJobs, not records. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wal/Journal.h"

namespace rayjournal::projection {

struct Violation {
  uint64_t seq = 0;
  std::string rule;     // short id: gap, outcome-without-intent, duplicate-side-effect, ...
  std::string message;  // names the object and the records involved
};

struct VerifyReport {
  uint64_t records = 0;
  uint64_t checkpointsChecked = 0;
  uint64_t checkpointsDropped = 0;  // states a salvage dropped (its JournalSalvaged says which)
  std::vector<Violation> violations;
  wal::LostRanges lost;  // seqs an earlier salvage found missing (not violations: reported)
  bool ok() const { return violations.empty(); }
};

// Throws wal::CorruptionError (with the seq) when the journal cannot be read.
VerifyReport verifyJournal(wal::Journal& journal);

}  // namespace rayjournal::projection
