#include "events/RecordJson.h"

#include "wal/JournalError.h"

namespace rayjournal::events {

nlohmann::json bodyToJson(const wal::Record& r) {
  if (r.body.empty()) return nlohmann::json::object();
  auto body = nlohmann::json::from_cbor(r.body.begin(), r.body.end(), true, false);
  if (body.is_discarded()) throw wal::CorruptionError(r.seq, "undecodable body");
  return body;
}

nlohmann::json recordToJson(const wal::Record& r) { return recordToJson(r, bodyToJson(r)); }

nlohmann::json recordToJsonWithText(const wal::Record& r) {
  nlohmann::json j = recordToJson(r);
  j["text"] = recordText(r, j["body"]);
  return j;
}

nlohmann::json recordToJson(const wal::Record& r, nlohmann::json body) {
  nlohmann::json j{{"seq", r.seq},         {"time_ms", r.timeMs},
                   {"epoch", r.epoch},     {"type", recordTypeName(r.type)},
                   {"attempt", r.attempt}, {"body", std::move(body)}};
  if (!r.object.empty()) {
    j["object"] = {{"kind", r.object.kind},
                   {"namespace", r.object.ns},
                   {"name", r.object.name},
                   {"uid", r.object.uid}};
  }
  return j;
}

std::string recordText(const wal::Record& r, const nlohmann::json& b) {
  switch (r.type) {
    case wal::RecordType::Intent: {
      std::string text = "intend   " + b.value("action", "") + " " + b.value("target", "");
      if (b.contains("status") && b["status"].contains("readyWorkerReplicas"))
        text += " " + b["status"].value("state", std::string("not ready"));  // a RayCluster's
      else if (b.contains("status"))
        text += " " + b["status"].value("jobDeploymentStatus", "");
      if (b.contains("why")) text += "  (why: " + b["why"].get<std::string>() + ")";
      return text;
    }
    case wal::RecordType::Outcome:
      if (b.contains("resolved_after_restart")) {
        return "resolved " + b.value("action", "") + " " + b.value("target", "") + " (seq " +
               std::to_string(b.value("intent_seq", 0)) +
               ", in doubt at restart): " + b["resolved_after_restart"].get<std::string>();
      }
      return "outcome  " + b.value("action", "") + " " + b.value("target", "") + ": " +
             b.value("result", "") +
             (b.contains("detail") ? " — " + b["detail"].get<std::string>() : "");
    case wal::RecordType::Observation: {
      std::string what = b.value("observation", "");
      if (what == "AttemptStarted") {
        return "observe  attempt " + std::to_string(b.value("attempt", 0)) +
               " starts: RayCluster " + b.value("rayClusterName", "") + ", submission " +
               b.value("jobId", "");
      }
      if (what == "Drift")
        return "observe  drift: journal expected " + b.value("journal_expected", "") +
               ", Kubernetes has " + b.value("kubernetes_has", "");
      if (what == "SpecChanged") {
        std::string by = b.value("changed_by", "");
        return "observe  spec changed (generation " + std::to_string(b.value("generation", 0)) +
               ") by " + (by.empty() ? "an unknown writer" : by) + ": " + b.value("workers", "");
      }
      if (what == "FieldIgnored")
        return "observe  " + b.value("path", "") + " is set but not implemented: " +
               b.value("instead", "");
      return "observe  " + what + " " + b.value("status", "");
    }
    default:
      return std::string(wal::recordTypeName(r.type));
  }
}

}  // namespace rayjournal::events
