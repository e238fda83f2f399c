// The Ray Jobs REST API (dashboard) as the controller needs it. Implemented by sim/SimRay and
// the real HTTP client. Thread-safe; calls block until Ray answers or the timeout passes.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>

#include "adapters/ray/JobInfo.h"

namespace rayjournal::ray {

// The dashboard could not be reached or gave an unusable answer.
class RayError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};


struct SubmitRequest {
  std::string submissionId;
  std::string entrypoint;
  nlohmann::json runtimeEnv;  // null when absent
  std::map<std::string, std::string> metadata;
  double entrypointNumCpus = 0;
  double entrypointNumGpus = 0;
  std::map<std::string, double> entrypointResources;
};

enum class SubmitResult { Submitted, AlreadyExists };

class RayJobsClient {
 public:
  virtual ~RayJobsClient() = default;
  // nullopt when Ray answers 404 (no such submission id). Throws RayError otherwise.
  virtual std::optional<JobInfo> getJob(const std::string& dashboard,
                                        const std::string& submissionId) = 0;
  // "already exists" is recognised by Ray's text, whatever the status code.
  virtual SubmitResult submit(const std::string& dashboard, const SubmitRequest& request) = 0;
  // true when Ray stopped it or it was already terminal; false when Ray does not know the id.
  virtual bool stop(const std::string& dashboard, const std::string& submissionId) = 0;
  // The token of a token-auth cluster (KubeRay's x-ray-authorization: Bearer) for every later
  // call to this dashboard; "" forgets it. Clients that cannot authenticate ignore it.
  virtual void useAuthToken(const std::string& dashboard, const std::string& token) {
    (void)dashboard;
    (void)token;
  }
};

}  // namespace rayjournal::ray
