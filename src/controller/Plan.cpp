#include "controller/Plan.h"

#include <array>
#include <utility>

#include <nlohmann/json.hpp>

#include "controller/JsonAccess.h"

namespace rayjournal::controller {
events::IntentBody Intent::journalBody() const {
  events::IntentBody body;
  body.action = action;
  body.target = target;
  static const json kNone;
  const json& object = this->object ? *this->object : kNone;
  if (action == Action::WriteStatus) {
    for (const char* k : {"jobDeploymentStatus", "jobStatus", "rayClusterName", "jobId", "reason",
                          "failed", "succeeded", "startTime", "endTime", "state",
                          "readyWorkerReplicas", "desiredWorkerReplicas"}) {
      const json& v = memberAt(object, k);
      if (v.is_number_integer()) body.status[k] = v.get<int64_t>();
      if (v.is_string()) body.status[k] = v.get<std::string>();
    }
  } else if (action == Action::CreateSubmitterJob) {
    const json& spec = objectAt(objectAt(objectAt(object, "spec"), "template"), "spec");
    const json& containers = arrayAt(spec, "containers");
    const json& env = containers.empty() ? arrayAt(json(), "env") : arrayAt(containers[0], "env");
    for (const auto& e : env)
      if (stringAt(e, "name") == "RAY_JOB_SUBMISSION_ID") body.submissionId = stringAt(e, "value");
  } else if (action == Action::SubmitRayJob || action == Action::StopRayJob) {
    body.dashboard = stringAt(object, "dashboard");
  }
  return body;
}

}  // namespace rayjournal::controller
