#include "events/JournalBodies.h"

#include "events/EventCodec.h"

namespace rayjournal::events {

wal::JournalOptions journalOptions(wal::JournalOptions options) {
  options.bodies.checkpoint = [](const wal::CheckpointMarker& m) {
    return encode(CheckpointBody{m.coversThrough, m.bytes, m.crc32});
  };
  options.bodies.salvaged = [](const wal::SalvageReport& s) {
    return encode(Observation{JournalSalvaged{s.keptThrough, s.cause, s.movedTo}});
  };
  return options;
}

}  // namespace rayjournal::events
