// Retention as the operator runs it: old history goes, what a restart or an intent in doubt
// needs stays, and the size limit holds on a real (RocksDB) journal.
#include "operator/JournalUpkeep.h"

#include <gtest/gtest.h>
#include <thread>

#include "support/CapturedLog.h"
#include "support/JournalFiles.h"
#include "support/TempDir.h"
#include "wal/JournalError.h"
#include "wal/MemoryStorage.h"
#include "wal/RocksStorage.h"

namespace rayjournal::operator_ {
namespace {

using rayjournal::testing::observation;
constexpr int64_t kHour = 3600 * 1000;

struct TimedJournal {
  int64_t now = 0;
  std::unique_ptr<wal::Journal> journal;
  // 300 records, one per hour of day 0..12.5; a checkpoint covering all of them.
  explicit TimedJournal(std::unique_ptr<wal::Journal> (*open)(int64_t&)) : journal(open(now)) {
    for (int i = 1; i <= 300; ++i) {
      now = i * kHour;
      journal->append(observation(i), wal::Durability::Lazy);
    }
    journal->writeCheckpoint(300, "state");
  }
};

std::unique_ptr<wal::Journal> inMemory(int64_t& now) {
  wal::JournalOptions options;
  options.nowMs = [&now] { return now; };
  return wal::Journal::open(std::make_shared<wal::MemoryStorage>(), options);
}

UpkeepOptions keep(int64_t ms, const int64_t& now, uint64_t inDoubt = 0) {
  UpkeepOptions o;
  o.keepMs = ms;
  o.scrubRecordsPerSecond = 0;
  o.retentionEvery = std::chrono::hours(1);  // only the explicit passes below
  o.nowMs = [&now] { return now; };
  o.oldestInDoubt = [inDoubt] { return inDoubt; };
  return o;
}

TEST(JournalUpkeepTest, PrunesHistoryOlderThanTheRetention) {
  TimedJournal t(inMemory);
  JournalUpkeep upkeep(*t.journal, keep(100 * kHour, t.now));
  EXPECT_EQ(upkeep.retainNow(), 199u);  // records written before hour 200 go
  EXPECT_EQ(t.journal->firstSeq(), 200u);
  EXPECT_EQ(upkeep.retainNow(), 0u);  // nothing more until time passes
  uint64_t present = 0;
  t.journal->scan(0, [&](const wal::Record&) { return ++present; });
  EXPECT_EQ(present, 102u);  // 200..300 and the checkpoint record
}

TEST(JournalUpkeepTest, KeepsAnIntentStillInDoubt) {
  TimedJournal t(inMemory);
  JournalUpkeep upkeep(*t.journal, keep(10 * kHour, t.now, /*inDoubt=*/150));
  upkeep.retainNow();
  EXPECT_EQ(t.journal->firstSeq(), 150u);
}

TEST(JournalUpkeepTest, ZeroRetentionKeepsEverything) {
  TimedJournal t(inMemory);
  JournalUpkeep upkeep(*t.journal, keep(0, t.now));
  EXPECT_EQ(upkeep.retainNow(), 0u);
  EXPECT_EQ(t.journal->firstSeq(), 1u);
}

TEST(JournalUpkeepTest, TheSizeLimitHoldsOnDisk) {
  rayjournal::testing::TempDir dir;
  int64_t now = 0;
  wal::JournalOptions options;
  options.nowMs = [&now] { return now; };
  auto journal = wal::Journal::open(dir.sub("journal"), options);
  for (int i = 1; i <= 3000; ++i) journal->append(observation(i), wal::Durability::Lazy);
  journal->writeCheckpoint(3000, "state");
  static_cast<wal::RocksStorage&>(journal->storage()).flushToFiles();  // measure tables, not WAL
  uint64_t before = journal->diskBytes();
  UpkeepOptions o = keep(0, now);
  o.maxBytes = before / 2;
  JournalUpkeep upkeep(*journal, o);
  EXPECT_GT(upkeep.retainNow(), 1000u);
  EXPECT_LT(journal->diskBytes(), before);
}

// CI's ASan run of stop 44's fix: the disk filled, space came back, the last RayJobs finished and
// the operator exited within one upkeep tick, so the log never said the journal was writable
// again (scenario.full_disk). The recovery is said when the upkeep stops, whenever it came.
TEST(JournalUpkeepTest, ARecoveryJustBeforeTheStopIsStillLogged) {
  rayjournal::testing::CapturedLog said;
  auto storage = std::make_shared<wal::MemoryStorage>();
  auto journal = wal::Journal::open(storage);
  storage->failNextWrites(1);
  EXPECT_THROW(journal->append(observation(1), wal::Durability::Sync), wal::JournalError);
  ASSERT_TRUE(journal->unwritable());
  {
    UpkeepOptions options;
    options.scrubRecordsPerSecond = 0;
    JournalUpkeep upkeep(*journal, options);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (said.text().find("cannot be written") == std::string::npos &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    ASSERT_NE(said.text().find("cannot be written"), std::string::npos) << said.text();
    journal->append(observation(2), wal::Durability::Sync);  // space is back
    ASSERT_FALSE(journal->unwritable());
  }  // stopped at once, before its next tick
  EXPECT_NE(said.text().find("is writable again"), std::string::npos) << said.text();
}

}  // namespace
}  // namespace rayjournal::operator_
