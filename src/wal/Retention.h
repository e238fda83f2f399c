// Where retention may cut the journal: the policy (age, size) says how much history to keep,
// and two floors say what may never go: the records the newest checkpoint does not cover
// (restart replays them) and the oldest intent still in doubt (its resolution names its seq).
// Pure: no I/O, no clock.
#pragma once

#include <algorithm>
#include <cstdint>

namespace rayjournal::wal {

struct RetentionInputs {
  uint64_t firstSeq = 1;          // oldest record kept now
  uint64_t checkpointCovers = 0;  // of the newest checkpoint; 0: none (nothing may go)
  uint64_t oldestInDoubt = 0;     // seq of the oldest unresolved intent; 0: none
  uint64_t keepFromByAge = 0;     // oldest seq young enough to keep; 0: no age limit
  uint64_t keepFromBySize = 0;    // oldest seq that fits the size limit; 0: no size limit
};

// The seq to prune before (records below it go); firstSeq when nothing may go.
inline uint64_t pruneBefore(const RetentionInputs& in) {
  if (in.checkpointCovers == 0) return in.firstSeq;
  uint64_t wanted = std::max(in.keepFromByAge, in.keepFromBySize);
  uint64_t floor = in.checkpointCovers + 1;
  if (in.oldestInDoubt) floor = std::min(floor, in.oldestInDoubt);
  return std::max(in.firstSeq, std::min(wanted, floor));
}

}  // namespace rayjournal::wal
