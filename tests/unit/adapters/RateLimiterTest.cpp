// The client-side rate limiter: a burst, then the QPS.
#include "adapters/kube/RateLimiter.h"

#include <gtest/gtest.h>

#include <chrono>

namespace rayjournal::kube {
namespace {

TEST(RateLimiterTest, BurstThenQps) {
  RateLimiter limiter(100, 5);  // 100/s: one token per 10 ms
  for (int i = 0; i < 5; ++i) limiter.acquire();
  EXPECT_GT(limiter.wouldWait().count(), 0) << "the burst is spent";
  auto began = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) limiter.acquire();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  EXPECT_GE(seconds, 0.08) << "10 tokens at 100/s take about 0.1 s";
  RateLimiter unlimited(0, 1);
  for (int i = 0; i < 1000; ++i) unlimited.acquire();
  EXPECT_EQ(unlimited.wouldWait().count(), 0);
}

}  // namespace
}  // namespace rayjournal::kube

namespace rayjournal::kube {
namespace {

TEST(RateLimiterTest, ThePathNamesItsResource) {
  EXPECT_EQ(resourceOfPath("/api/v1/namespaces/a/pods/p/status"), "pods");
  EXPECT_EQ(resourceOfPath("/api/v1/pods?watch=1&resourceVersion=5"), "pods");
  EXPECT_EQ(resourceOfPath("/apis/ray.io/v1/namespaces/a/rayjobs"), "rayjobs");
  EXPECT_EQ(resourceOfPath("/apis/ray.io/v1/rayclusters?labelSelector=x"), "rayclusters");
  EXPECT_EQ(resourceOfPath("/apis/events.k8s.io/v1/namespaces/a/events"), "events");
  EXPECT_EQ(resourceOfPath("/api/v1/namespaces/a"), "namespaces");
  EXPECT_EQ(resourceOfPath("/api/v1/namespaces/a/services/h:8265/proxy/api/jobs/"), "services");
  EXPECT_EQ(resourceOfPath("/version"), "version");
}

// KubeRay's --qps 100 is 100/s of each kind (one client-go bucket per kind under
// controller-runtime); the same setting here must not throttle Pods because RayJobs spent theirs.
TEST(RateLimiterTest, EachResourceHasItsOwnBucket) {
  ResourceRateLimiters limiters(100, 3);
  for (int i = 0; i < 3; ++i) limiters.acquire("/apis/ray.io/v1/namespaces/a/rayjobs/j/status");
  EXPECT_GT(limiters.forPath("/apis/ray.io/v1/rayjobs").wouldWait().count(), 0)
      << "the RayJobs' burst is spent";
  EXPECT_EQ(limiters.forPath("/api/v1/namespaces/a/pods").wouldWait().count(), 0)
      << "the Pods' is not";
  EXPECT_EQ(&limiters.forPath("/apis/ray.io/v1/rayjobs"),
            &limiters.forPath("/apis/ray.io/v1/namespaces/b/rayjobs/x"));
}

}  // namespace
}  // namespace rayjournal::kube
