// Controller-side RayJob validation (reference 1.6, V1-V12) as KubeRay v1.7.0's
// ValidateRayJobMetadata, ValidateRayJobSpec (with the part of ValidateRayClusterSpec a RayJob's
// cluster needs) and ValidateRayJobStatus: the same rules in the same order, with KubeRay's
// message texts word for word (alerting rules match status.message). Checks KubeRay leaves to
// its CRD schema (types, enums) say "The RayJob spec is invalid: " and name the field. Pure.
#pragma once

#include <optional>
#include <string>

#include "controller/FeatureGates.h"
#include "controller/rayjob/RayJob.h"

namespace rayjournal::controller {

struct ValidationError {
  std::string reason;   // InvalidRayJobMetadata, InvalidRayJobSpec or InvalidRayJobStatus
  std::string message;  // KubeRay's text, or for schema checks one naming the field
};

std::optional<ValidationError> validateRayJob(const RayJob& job, const FeatureGates& gates = {});

}  // namespace rayjournal::controller
