#include "events/RecordJson.h"

#include "wal/JournalError.h"

namespace rayjournal::events {

nlohmann::json bodyToJson(const wal::Record& r) {
  if (r.body.empty()) return nlohmann::json::object();
  auto body = nlohmann::json::from_cbor(r.body.begin(), r.body.end(), true, false);
  if (body.is_discarded()) throw wal::CorruptionError(r.seq, "undecodable body");
  return body;
}

nlohmann::json recordToJson(const wal::Record& r) {
  nlohmann::json j{{"seq", r.seq},         {"time_ms", r.timeMs},
                   {"epoch", r.epoch},     {"type", recordTypeName(r.type)},
                   {"attempt", r.attempt}, {"body", bodyToJson(r)}};
  if (!r.object.empty()) {
    j["object"] = {{"kind", r.object.kind},
                   {"namespace", r.object.ns},
                   {"name", r.object.name},
                   {"uid", r.object.uid}};
  }
  return j;
}

}  // namespace rayjournal::events
