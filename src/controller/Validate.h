// Controller-side RayJob validation (reference 1.6, V1-V12). Pure.
#pragma once

#include <optional>
#include <string>

#include "controller/RayJob.h"

namespace rayjournal::controller {

struct ValidationError {
  std::string reason;   // InvalidRayJobMetadata, InvalidRayJobSpec or InvalidRayJobStatus
  std::string message;  // names the field
};

std::optional<ValidationError> validateRayJob(const RayJob& job);

}  // namespace rayjournal::controller
