// A token bucket: qps tokens per second, at most burst saved. acquire() blocks until a token is
// available (client-side rate limit of the Kubernetes client, --kube-api-qps/--kube-api-burst).
// qps <= 0 disables the limit. Thread-safe.
#pragma once

#include <chrono>
#include <mutex>

namespace rayjournal::kube {

class RateLimiter {
 public:
  RateLimiter(double qps, int burst);
  void acquire();
  // Without blocking: how long acquire() would wait now (for tests and logs).
  std::chrono::microseconds wouldWait();

 private:
  void refill(std::chrono::steady_clock::time_point now);
  double qps_, burst_, tokens_;
  std::chrono::steady_clock::time_point last_;
  std::mutex mu_;
};

}  // namespace rayjournal::kube
