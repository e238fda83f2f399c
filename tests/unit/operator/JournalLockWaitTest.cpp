// A second operator on the same journal volume (a forced Pod deletion starts the replacement
// while the old container still runs) waits for the lock instead of failing or acting, and the
// shard a replica takes from its pod name.
#include <gtest/gtest.h>

#include <atomic>
#include <future>

#include "events/JournalBodies.h"
#include "operator/RunnerSupport.h"
#include "operator/ShardLeases.h"
#include "support/CapturedLog.h"
#include "support/TempDir.h"
#include "wal/JournalError.h"

namespace rayjournal::operator_ {
namespace {

std::unique_ptr<wal::Journal> openJournal(const std::string& dir) {
  return wal::Journal::open(dir, events::journalOptions({}));
}

TEST(JournalLockWaitTest, ALockedJournalIsWaitedForAndOpenedOnceItsHolderIsGone) {
  rayjournal::testing::TempDir dir;
  auto holder = openJournal(dir.sub("journal"));
  rayjournal::testing::CapturedLog log;
  std::promise<void> waitStarted;
  std::atomic<int> waitingChanges{0};
  LockWait lockWait{[] { return true; },
                    [&](bool waiting) {
                      if (waitingChanges++ == 0 && waiting) waitStarted.set_value();
                    },
                    std::chrono::milliseconds(10)};
  auto opening = std::async(std::launch::async, [&] {
    int code = -1;
    auto journal = openJournalOrLog(dir.sub("journal"), false, code, &lockWait);
    return std::make_pair(std::move(journal), code);
  });
  waitStarted.get_future().wait();
  EXPECT_EQ(opening.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout)
      << "the second opener went on while the first still held the journal";
  const uint64_t holdersEpoch = holder->epoch();
  holder.reset();
  auto [journal, code] = opening.get();
  ASSERT_NE(journal, nullptr);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(waitingChanges.load(), 2) << "the wait started and ended once";
  EXPECT_EQ(journal->epoch(), holdersEpoch + 1) << "an epoch of its own, after the holder's";
  EXPECT_TRUE((log.text().find("is locked by another process") != std::string::npos)) << log.text();
  EXPECT_TRUE((log.text().find("waiting for it to exit") != std::string::npos)) << log.text();
  EXPECT_TRUE((log.text().find("the lock is ours") != std::string::npos)) << log.text();
}

TEST(JournalLockWaitTest, AStopWhileWaitingGivesUpWithoutOpening) {
  rayjournal::testing::TempDir dir;
  auto holder = openJournal(dir.sub("journal"));
  std::atomic<int> polls{0};
  LockWait lockWait{[&] { return ++polls < 3; }, [](bool) {}, std::chrono::milliseconds(1)};
  int code = 0;
  EXPECT_EQ(openJournalOrLog(dir.sub("journal"), false, code, &lockWait), nullptr);
  EXPECT_EQ(code, kExitJournalUnusable);
  EXPECT_EQ(polls.load(), 3);
}

TEST(JournalLockWaitTest, WithoutALockWaitALockedJournalIsRefusedAtOnce) {
  rayjournal::testing::TempDir dir;
  auto holder = openJournal(dir.sub("journal"));
  rayjournal::testing::CapturedLog log;
  int code = 0;
  EXPECT_EQ(openJournalOrLog(dir.sub("journal"), false, code), nullptr);
  EXPECT_EQ(code, kExitJournalUnusable);
  EXPECT_TRUE((log.text().find("is locked by another process") != std::string::npos)) << log.text();
}

TEST(ShardIndexTest, OneShardMakesEveryReplicaACandidateForTheSameLease) {
  EXPECT_EQ(shardIndexFor(-1, 1, "rayjournal-operator-1"), 0);
  EXPECT_EQ(shardIndexFor(-1, 1, nullptr), 0);
}

TEST(ShardIndexTest, ShardsComeFromThePodOrdinalUnlessTheFlagSaysOtherwise) {
  EXPECT_EQ(shardIndexFor(-1, 3, "rayjournal-operator-2"), 2);
  EXPECT_EQ(shardIndexFor(-1, 3, "laptop"), 0);
  EXPECT_EQ(shardIndexFor(1, 3, "rayjournal-operator-2"), 1);
}

}  // namespace
}  // namespace rayjournal::operator_
