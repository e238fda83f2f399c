#include "events/EventCodec.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "wal/JournalError.h"

namespace rayjournal::events {
namespace {

using nlohmann::json;

std::string bytesOf(const json& map) {
  std::vector<uint8_t> cbor = json::to_cbor(map);
  return std::string(cbor.begin(), cbor.end());
}

// One decoded body map and the record it came from, so that every complaint names the seq.
class Fields {
 public:
  explicit Fields(const wal::Record& r) : seq_(r.seq) {
    map_ = json::from_cbor(r.body.begin(), r.body.end(), true, false);
    if (map_.is_discarded() || !map_.is_object())
      throw wal::CorruptionError(seq_, "undecodable " + std::string(recordTypeName(r.type)) +
                                           " body");
  }
  bool has(const char* key) const { return map_.contains(key); }
  std::string text(const char* key) const {
    auto it = map_.find(key);
    if (it == map_.end()) return "";
    if (!it->is_string()) wrong(key, "a string");
    return it->get<std::string>();
  }
  uint64_t number(const char* key, uint64_t otherwise = 0) const {
    auto it = map_.find(key);
    if (it == map_.end()) return otherwise;
    if (!it->is_number_unsigned()) wrong(key, "an unsigned integer");
    return it->get<uint64_t>();
  }
  Action action() const {
    auto a = actionFromName(text("action"));
    if (!a) wrong("action", "a known action");
    return *a;
  }
  Result result(const char* key) const {
    auto r = resultFromName(text(key));
    if (!r) wrong(key, "a known result");
    return *r;
  }
  const json& map() const { return map_; }
  [[noreturn]] void wrong(const char* key, const char* what) const {
    throw wal::CorruptionError(seq_, std::string("body field ") + key + " is not " + what);
  }

 private:
  uint64_t seq_;
  json map_;
};

json statusJson(const StatusDigest& status) {
  json out = json::object();
  for (const auto& [k, v] : status) {
    if (const auto* n = std::get_if<int64_t>(&v))
      out[k] = *n;
    else
      out[k] = std::get<std::string>(v);
  }
  return out;
}

StatusDigest statusOf(const json& status) {
  StatusDigest out;
  if (!status.is_object()) return out;
  for (const auto& [k, v] : status.items()) {
    if (v.is_number_integer())
      out[k] = v.get<int64_t>();
    else if (v.is_string())
      out[k] = v.get<std::string>();
  }
  return out;
}

void putIfSet(json& map, const char* key, const std::string& value) {
  if (!value.empty()) map[key] = value;
}

}  // namespace

std::string encodeStatus(const StatusDigest& status) {
  return bytesOf(statusJson(status));
}

StatusDigest decodeStatus(const std::string& bytes) {
  json map = json::from_cbor(bytes.begin(), bytes.end(), true, false);
  if (map.is_discarded() || !map.is_object())
    throw std::invalid_argument("status digest is not a CBOR map");
  return statusOf(map);
}

std::string encode(const IntentBody& b) {
  json map{{"action", actionName(b.action)}, {"target", b.target}};
  putIfSet(map, "why", b.why);
  if (!b.status.empty()) map["status"] = statusJson(b.status);
  putIfSet(map, "submission_id", b.submissionId);
  putIfSet(map, "dashboard", b.dashboard);
  putIfSet(map, "rayjob", b.rayjob);
  return bytesOf(map);
}

IntentBody decodeIntent(const wal::Record& r) {
  Fields f(r);
  return {f.action(),           f.text("target"),    f.text("why"),
          statusOf(f.map().value("status", json())), f.text("submission_id"),
          f.text("dashboard"),  f.text("rayjob")};
}

std::string encode(const OutcomeBody& b) {
  json map{{"intent_seq", b.intentSeq}, {"action", actionName(b.action)}, {"target", b.target}};
  map[isResolution(b.result) ? "resolved_after_restart" : "result"] = resultName(b.result);
  putIfSet(map, "detail", b.detail);
  if (b.code) map["code"] = *b.code;
  return bytesOf(map);
}

OutcomeBody decodeOutcome(const wal::Record& r) {
  Fields f(r);
  OutcomeBody b{f.number("intent_seq"), f.action(), f.text("target"), Result::Ok, f.text("detail"),
                std::nullopt};
  b.result = f.result(f.has("resolved_after_restart") ? "resolved_after_restart" : "result");
  if (f.map().contains("code") && f.map()["code"].is_number_integer())
    b.code = f.map()["code"].get<int>();
  return b;
}

std::string encode(const Observation& o) {
  json map{{"observation", observationName(o)}};
  if (const auto* a = std::get_if<AttemptStarted>(&o)) {
    map.update({{"attempt", a->attempt},
                {"incarnation", a->incarnation},
                {"rayClusterName", a->rayClusterName},
                {"jobId", a->jobId}});
  } else if (const auto* t = std::get_if<RayJobTerminal>(&o)) {
    map.update({{"status", t->status}, {"jobId", t->jobId}});
  } else if (const auto* d = std::get_if<Drift>(&o)) {
    map.update({{"journal_expected", d->journalExpected},
                {"kubernetes_has", d->kubernetesHas},
                {"decision", d->decision}});
  } else if (const auto* c = std::get_if<ChildMissing>(&o)) {
    map.update({{"kind", c->kind}, {"name", c->name}, {"jobId", c->jobId}});
  } else if (const auto* seen = std::get_if<SubmissionSeen>(&o)) {
    map.update({{"jobId", seen->jobId}, {"status", seen->status}});
  } else if (const auto* changed = std::get_if<SpecChanged>(&o)) {
    map.update({{"generation", changed->generation},
                {"changed_by", changed->changedBy},
                {"workers", changed->workers}});
  } else if (const auto* ignored = std::get_if<FieldIgnored>(&o)) {
    map.update({{"path", ignored->path}, {"instead", ignored->instead}});
  } else if (const auto* s = std::get_if<JournalSalvaged>(&o)) {
    map.update({{"kept_through", s->keptThrough},
                {"cause", s->cause},
                {"original_moved_to", s->originalMovedTo},
                {"lost_ranges", s->lostRanges},
                {"kept_after_gap", s->keptAfterGap},
                {"problems", s->problems},
                {"dropped_checkpoints", s->droppedCheckpoints}});
  }
  return bytesOf(map);
}

std::optional<Observation> decodeObservation(const wal::Record& r) {
  Fields f(r);
  const std::string what = f.text("observation");
  if (what == "AttemptStarted")
    return AttemptStarted{uint32_t(f.number("attempt", 1)), uint32_t(f.number("incarnation", 1)),
                          f.text("rayClusterName"), f.text("jobId")};
  if (what == "RayJobTerminal") return RayJobTerminal{f.text("status"), f.text("jobId")};
  if (what == "Drift")
    return Drift{f.text("journal_expected"), f.text("kubernetes_has"), f.text("decision")};
  if (what == "ChildMissing") return ChildMissing{f.text("kind"), f.text("name"), f.text("jobId")};
  if (what == "SubmissionSeen") return SubmissionSeen{f.text("jobId"), f.text("status")};
  if (what == "SpecChanged")
    return SpecChanged{int64_t(f.number("generation")), f.text("changed_by"), f.text("workers")};
  if (what == "FieldIgnored") return FieldIgnored{f.text("path"), f.text("instead")};
  if (what == "JournalSalvaged")
    return JournalSalvaged{f.number("kept_through"), f.text("cause"), f.text("original_moved_to"),
                           f.text("lost_ranges"), f.number("kept_after_gap"), f.text("problems"),
                           f.text("dropped_checkpoints")};
  return std::nullopt;
}

std::string encode(const ControllerStarted& b) {
  return bytesOf({{"epoch", b.epoch},
                  {"in_doubt", b.inDoubt},
                  {"replayed", b.replayed},
                  {"checkpoint_seq", b.checkpointSeq}});
}

ControllerStarted decodeControllerStarted(const wal::Record& r) {
  Fields f(r);
  return {f.number("epoch"), f.number("in_doubt"), f.number("replayed"),
          f.number("checkpoint_seq")};
}

std::string encode(const CheckpointBody& b) {
  return bytesOf({{"covers_through", b.coversThrough}, {"bytes", b.bytes}, {"crc32", b.crc32}});
}

CheckpointBody decodeCheckpoint(const wal::Record& r) {
  Fields f(r);
  return {f.number("covers_through"), f.number("bytes"), uint32_t(f.number("crc32"))};
}

}  // namespace rayjournal::events
