#include <gtest/gtest.h>

#include "controller/WorkQueue.h"

namespace rayjournal::controller {
namespace {

TEST(WorkQueueTest, DeduplicatesKeys) {
  ManualClock clock;
  WorkQueue q(clock);
  q.add("a");
  q.add("a");
  q.add("b");
  EXPECT_EQ(q.depth(), 2u);
  EXPECT_EQ(*q.get(), "a");
  EXPECT_EQ(*q.get(), "b");
}

TEST(WorkQueueTest, KeyAddedWhileProcessingIsRequeuedOnlyAfterDone) {
  ManualClock clock;
  WorkQueue q(clock);
  q.add("a");
  ASSERT_EQ(*q.get(), "a");
  q.add("a");  // a second worker must not get it now
  EXPECT_EQ(q.depth(), 0u);
  EXPECT_TRUE(q.pendingFor("a"));
  q.done("a");
  EXPECT_EQ(q.depth(), 1u);
  EXPECT_EQ(*q.get(), "a");
}

TEST(WorkQueueTest, DelayedKeyBecomesReadyWhenTheClockPasses) {
  ManualClock clock;
  WorkQueue q(clock);
  q.addAfter("a", 3000);
  EXPECT_FALSE(q.idle());
  clock.advance(3000);
  EXPECT_EQ(*q.get(), "a");
}

TEST(WorkQueueTest, RateLimitedDelaysDoubleAndForgetResets) {
  ManualClock clock;
  WorkQueue q(clock, BackoffPolicy{100, 10000});
  q.addRateLimited("a");
  q.addRateLimited("a");  // 200 ms, but the earlier 100 ms wake-up stands
  EXPECT_EQ(q.failures("a"), 2);
  clock.advance(100);
  EXPECT_EQ(*q.get(), "a");
  q.done("a");
  q.forget("a");
  EXPECT_EQ(q.failures("a"), 0);
}

TEST(WorkQueueTest, ShutDownReleasesWaitingWorkers) {
  ManualClock clock;
  WorkQueue q(clock);
  q.shutDown();
  EXPECT_FALSE(q.get().has_value());
}

}  // namespace
}  // namespace rayjournal::controller
