// Client-side rate limits of the Kubernetes client (--kube-api-qps/--kube-api-burst).
//
// RateLimiter is one token bucket: qps tokens per second, at most burst saved; acquire() blocks
// until a token is available; qps <= 0 disables it. ResourceRateLimiters keeps one bucket per
// API resource (pods, rayjobs, services, ...), each with the full qps and burst. That is what a
// user's QPS setting means to client-go under controller-runtime, so to KubeRay: controller-runtime
// builds one REST client per kind, and every REST client has its own token bucket, so
// `--qps 100 --burst 200` lets KubeRay send up to 100/s of each kind it touches. The same flags
// here put the same bound on the API server. Both thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

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

// The resource a REST path addresses: "/api/v1/namespaces/a/pods/p/status" -> "pods",
// "/apis/ray.io/v1/rayjobs?watch=1" -> "rayjobs", "/api/v1/namespaces/a" -> "namespaces";
// anything else (/version, /readyz) is its first segment.
std::string resourceOfPath(std::string_view path);

class ResourceRateLimiters {
 public:
  ResourceRateLimiters(double qps, int burst) : qps_(qps), burst_(burst) {}
  // The bucket of the resource `path` addresses; it lives as long as this object.
  RateLimiter& forPath(std::string_view path);
  void acquire(std::string_view path) { forPath(path).acquire(); }

 private:
  double qps_;
  int burst_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<RateLimiter>, std::less<>> buckets_;
};

}  // namespace rayjournal::kube
