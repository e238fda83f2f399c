// A journal record: one fact the controller journaled (an intent, its outcome, an observation,
// a restart, a checkpoint). Plain value type; the on-disk layout is in FORMAT.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rayjournal::wal {

enum class RecordType : uint8_t {
  ControllerStarted = 1,
  Intent = 2,
  Outcome = 3,
  Observation = 4,
  Checkpoint = 5,
};

// Requires a known type; guarantees a stable name used in FORMAT.md, exports and logs.
std::string_view recordTypeName(RecordType type);
// Returns nullopt for an unknown name.
std::optional<RecordType> recordTypeFromName(std::string_view name);
bool isKnownRecordType(uint8_t raw);

// Identity of the Kubernetes object a record is about. Empty for controller-level records.
struct ObjectRef {
  std::string kind;
  std::string ns;
  std::string name;
  std::string uid;

  bool empty() const { return kind.empty() && ns.empty() && name.empty(); }
  // "kind/namespace/name": the per-object index key (uid is deliberately not part of it, so a
  // recreated object with the same name shares one history, told apart by uid).
  std::string indexKey() const;
  bool operator==(const ObjectRef&) const = default;
};

struct Record {
  uint64_t seq = 0;    // assigned by the journal on append
  int64_t timeMs = 0;  // wall time, Unix milliseconds; set by the journal when 0
  uint64_t epoch = 0;  // controller incarnation; set by the journal when 0
  RecordType type = RecordType::Observation;
  ObjectRef object;
  uint32_t attempt = 0;  // RayJob attempt this record belongs to (0 = none)
  // The body as bytes the journal does not interpret (a CBOR map; events/EventCodec is the one
  // place that writes and reads them, events/EVENTS.md their schema).
  std::string body;
  // The seq of the previous record of the same object (0: the first the chain holds), set by
  // the journal on append: an object's history is a walk back from its newest record. nullopt
  // for records of journal format 1, which the by_object index finds instead (FORMAT.md).
  std::optional<uint64_t> previous;

  bool operator==(const Record&) const = default;
};

}  // namespace rayjournal::wal
