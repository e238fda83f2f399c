#include "events/JournalBodies.h"

#include "events/EventCodec.h"

namespace rayjournal::events {

wal::JournalOptions journalOptions(wal::JournalOptions options) {
  options.bodies.checkpoint = [](const wal::CheckpointMarker& m) {
    return encode(CheckpointBody{m.coversThrough, m.bytes, m.crc32});
  };
  options.bodies.salvaged = [](const wal::SalvageReport& s) {
    std::string problems;
    for (const auto& p : s.problems) problems += (problems.empty() ? "" : "; ") + p;
    return encode(Observation{JournalSalvaged{s.keptThrough, s.cause, s.movedTo,
                                              s.lost.toString(), s.keptAfterGap, problems,
                                              s.droppedCheckpoints.toString()}});
  };
  return options;
}

}  // namespace rayjournal::events
