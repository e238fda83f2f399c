// Retention's cut point, the time search it uses, and the scrub that finds damaged old history.
#include <gtest/gtest.h>

#include "support/JournalFiles.h"
#include "wal/Journal.h"
#include "wal/MemoryStorage.h"
#include "wal/RecordCodec.h"
#include "wal/Retention.h"

namespace rayjournal::wal {
namespace {

using rayjournal::testing::observation;

TEST(RetentionTest, NothingGoesWithoutACheckpoint) {
  EXPECT_EQ(pruneBefore({.firstSeq = 1, .checkpointCovers = 0, .keepFromByAge = 500}), 1u);
}

TEST(RetentionTest, AgeCutsUpToTheNewestCheckpoint) {
  EXPECT_EQ(pruneBefore({.firstSeq = 1, .checkpointCovers = 900, .keepFromByAge = 500}), 500u);
  EXPECT_EQ(pruneBefore({.firstSeq = 1, .checkpointCovers = 300, .keepFromByAge = 500}), 301u);
}

TEST(RetentionTest, AnIntentInDoubtIsNeverPruned) {
  EXPECT_EQ(pruneBefore({.firstSeq = 1, .checkpointCovers = 900, .oldestInDoubt = 42,
                         .keepFromByAge = 500}),
            42u);
}

TEST(RetentionTest, TheStricterOfAgeAndSizeWins) {
  EXPECT_EQ(pruneBefore({.firstSeq = 1, .checkpointCovers = 900, .keepFromByAge = 100,
                         .keepFromBySize = 700}),
            700u);
  EXPECT_EQ(pruneBefore({.firstSeq = 600, .checkpointCovers = 900, .keepFromByAge = 100}), 600u);
}

TEST(RetentionTest, FirstSeqAtOrAfterFindsTheTimeBoundary) {
  int64_t now = 1000;
  JournalOptions options;
  options.nowMs = [&] { return now; };
  auto journal = Journal::open(std::make_shared<MemoryStorage>(), options);
  for (int i = 1; i <= 100; ++i) {
    now = 1000 + i * 10;  // seq i written at 1000 + 10 i
    journal->append(observation(i), Durability::Lazy);
  }
  EXPECT_EQ(journal->firstSeqAtOrAfter(0), 1u);
  EXPECT_EQ(journal->firstSeqAtOrAfter(1505), 51u);
  EXPECT_EQ(journal->firstSeqAtOrAfter(1510), 51u);
  EXPECT_EQ(journal->firstSeqAtOrAfter(99999), 101u);
}

TEST(RetentionTest, ScrubFindsADamagedOldRecordAndGoesOn) {
  auto storage = std::make_shared<MemoryStorage>();
  auto journal = Journal::open(storage);
  for (int i = 1; i <= 50; ++i) journal->append(observation(i), Durability::Sync);
  testing::damageStoredRecord(*storage, 7);
  auto first = journal->scrub(1, 20);
  ASSERT_EQ(first.corrupt.size(), 1u);
  EXPECT_EQ(first.corrupt[0].rfind("seq 7:", 0), 0u) << first.corrupt[0];
  EXPECT_EQ(first.next, 21u);
  auto rest = journal->scrub(first.next, 1000);
  EXPECT_TRUE(rest.corrupt.empty());
  EXPECT_EQ(rest.next, 51u);
  EXPECT_EQ(journal->stats().scrubCorrupt, 1u);
}

}  // namespace
}  // namespace rayjournal::wal

namespace rayjournal::wal {
namespace {

TEST(JournalIndexTest, AStrayIndexEntryIsReportedAndRemovedByReindex) {
  auto storage = std::make_shared<MemoryStorage>();
  auto journal = Journal::open(storage);
  for (int i = 1; i <= 30; ++i) journal->append(observation(i), Durability::Sync);
  EXPECT_TRUE(journal->checkIndex().empty());
  storage->write({{Column::ByObject, encodeObjectIndexKey("RayJob/default/ghost", 12), ""}}, true);
  auto problems = journal->checkIndex();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("RayJob/default/ghost points at seq 12"), std::string::npos)
      << problems[0];
  EXPECT_EQ(journal->rebuildIndex(), 0u);  // every record is on its object's chain
  EXPECT_TRUE(journal->checkIndex().empty());
}

}  // namespace
}  // namespace rayjournal::wal
