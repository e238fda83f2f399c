// Wraps a RayJobsClient and makes calls fail as an unreachable dashboard would, for the
// operator only (the simulated world's own actors keep the real client). Thread-safe.
#pragma once

#include <atomic>

#include "adapters/ray/RayJobsClient.h"

namespace rayjournal::sim {

class FaultyRayClient : public ray::RayJobsClient {
 public:
  explicit FaultyRayClient(ray::RayJobsClient& inner) : inner_(inner) {}
  void failNext(int calls) { failures_ = calls; }
  uint64_t injected() const { return injected_; }

  std::optional<ray::JobInfo> getJob(const std::string& dashboard, const std::string& id) override {
    maybeFail(dashboard);
    return inner_.getJob(dashboard, id);
  }
  ray::SubmitResult submit(const std::string& dashboard,
                           const ray::SubmitRequest& request) override {
    maybeFail(dashboard);
    return inner_.submit(dashboard, request);
  }
  bool stop(const std::string& dashboard, const std::string& id) override {
    maybeFail(dashboard);
    return inner_.stop(dashboard, id);
  }
  void useAuthToken(const std::string& dashboard, const std::string& token) override {
    inner_.useAuthToken(dashboard, token);
  }

 private:
  void maybeFail(const std::string& dashboard) {
    if (failures_.load() > 0 && failures_.fetch_sub(1) > 0) {
      ++injected_;
      throw ray::RayError("Ray dashboard " + dashboard +
                          " unreachable: connection timed out (injected)");
    }
  }
  ray::RayJobsClient& inner_;
  std::atomic<int> failures_{0};
  std::atomic<uint64_t> injected_{0};
};

}  // namespace rayjournal::sim
