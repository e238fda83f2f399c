#include "projection/LastStatus.h"

namespace rayjournal::projection {

std::optional<std::string> statusAfterOutcome(events::Action intended, events::Result result,
                                              const events::StatusDigest& written) {
  if (intended != events::Action::WriteStatus || !events::landed(result)) return std::nullopt;
  auto it = written.find("jobDeploymentStatus");
  const auto* text = it == written.end() ? nullptr : std::get_if<std::string>(&it->second);
  return text ? *text : "";
}

std::optional<std::string> statusAfterObservation(const events::Observation& observation) {
  if (const auto* drift = std::get_if<events::Drift>(&observation)) return drift->kubernetesHas;
  return std::nullopt;
}

}  // namespace rayjournal::projection
