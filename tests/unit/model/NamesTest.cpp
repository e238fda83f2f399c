#include "model/Names.h"

#include <gtest/gtest.h>

namespace rayjournal::model {
namespace {

TEST(NamesTest, AWorkerNameSplitsIntoItsGroupAndIndex) {
  auto parts = workerNameParts(workerPodName("rc", "cpu-group", 12), "rc");
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->group, "cpu-group");
  EXPECT_EQ(parts->index, 12u);
}

TEST(NamesTest, AGroupWhoseNameHoldsWorkerIsFoundWhole) {
  auto parts = workerNameParts(workerPodName("rc", "a-worker-b", 3), "rc");
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->group, "a-worker-b");
  EXPECT_EQ(parts->index, 3u);
}

TEST(NamesTest, TheHeadAndForeignNamesAreNoWorkers) {
  EXPECT_FALSE(workerNameParts(headPodName("rc"), "rc"));
  EXPECT_FALSE(workerNameParts("rc-g-worker-x", "rc"));
  EXPECT_FALSE(workerNameParts("rc-g-worker-01", "rc"));
  EXPECT_FALSE(workerNameParts("rcx-g-worker-1", "rc"));
  EXPECT_FALSE(workerNameParts("rc-worker-1", "rc"));  // no group between
  EXPECT_FALSE(workerNameParts("other-g-worker-1", "rc"));
}

}  // namespace
}  // namespace rayjournal::model
