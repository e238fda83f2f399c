// What Ray says about one submission, as the decisions read it. Plain value type.
#pragma once

#include <cstdint>
#include <string>

namespace rayjournal::ray {

struct JobInfo {
  std::string submissionId;
  std::string status;  // PENDING RUNNING STOPPED SUCCEEDED FAILED
  std::string message;
  uint64_t startTimeMs = 0;
  uint64_t endTimeMs = 0;
};

// STOPPED, SUCCEEDED or FAILED.
bool isTerminalRayStatus(const std::string& status);

// One of the statuses Ray's Jobs API defines (a newer or broken Ray may answer another).
inline bool isKnownRayStatus(const std::string& status) {
  return status == "PENDING" || status == "RUNNING" || isTerminalRayStatus(status);
}

}  // namespace rayjournal::ray
