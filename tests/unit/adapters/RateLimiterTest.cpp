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
