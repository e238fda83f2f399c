// Corruption injected into the files RocksDB keeps (and into record values): the journal must
// refuse to open with an error naming the record or file, and salvage must keep the good prefix.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "support/JournalFiles.h"
#include "support/TempDir.h"
#include "wal/HighWaterFile.h"
#include "wal/Journal.h"
#include "wal/JournalError.h"
#include "wal/MemoryStorage.h"
#include "wal/RecordCodec.h"
#include "wal/RocksStorage.h"

namespace rayjournal::wal {
namespace {

namespace fs = std::filesystem;
using namespace rayjournal::testing;

// Writes records 1..100 into one table file and 101..200 into a second; returns the second
// table file of the records column (the largest new file).
std::string writeTwoTables(const std::string& dir) {
  auto journal = Journal::open(dir);
  auto& storage = static_cast<RocksStorage&>(journal->storage());
  for (int i = 1; i <= 100; ++i) journal->append(observation(i), Durability::Lazy);
  storage.flushToFiles();
  auto before = filesWithSuffix(dir, ".sst");
  for (int i = 101; i <= 200; ++i) journal->append(observation(i), Durability::Lazy);
  storage.flushToFiles();
  auto after = filesWithSuffix(dir, ".sst");
  std::set<std::string> added;
  std::set_difference(after.begin(), after.end(), before.begin(), before.end(),
                      std::inserter(added, added.end()));
  return largest(added);
}

// A child process appends `count` synced records and dies without closing the journal, so the
// records are only in RocksDB's write-ahead log (a clean close would move them to table files).
void writeAndCrash(const std::string& dir, int count) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto journal = Journal::open(dir);
    for (int i = 1; i <= count; ++i) journal->append(observation(i), Durability::Sync);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

std::vector<uint64_t> seqs(Journal& journal) {
  std::vector<uint64_t> out;
  journal.scan(0, [&](const Record& r) {
    out.push_back(r.seq);
    return true;
  });
  return out;
}

TEST(JournalCorruptionTest, FlippedBytesInTableFileRefuseOpenThenSalvageKeepsPrefix) {
  TempDir dir;
  std::string journalDir = dir.sub("journal");
  std::string table = writeTwoTables(journalDir);
  flipBytes(table, 100, 16);  // inside the first data block of records 101..200
  try {
    Journal::open(journalDir);
    FAIL() << "opened a corrupt journal";
  } catch (const CorruptionError& e) {
    EXPECT_GE(e.seq(), 101u) << e.what();
    EXPECT_LE(e.seq(), 200u) << e.what();
  }
  JournalOptions options;
  options.salvage = true;
  options.bodies.salvaged = [](const SalvageReport& s) { return "salvaged: " + s.cause; };
  auto journal = Journal::open(journalDir, options);
  ASSERT_TRUE(journal->salvaged());
  uint64_t kept = journal->salvaged()->keptThrough;
  EXPECT_GE(kept, 100u);
  EXPECT_LT(kept, 200u);
  // Only the bad block's records are lost; the rest of that table is read past the damage.
  const auto& lost = journal->salvaged()->lost;
  ASSERT_EQ(lost.ranges().size(), 1u) << lost.toString();
  EXPECT_EQ(lost.ranges()[0].first, kept + 1);
  EXPECT_LT(lost.ranges()[0].second, 200u);
  EXPECT_EQ(journal->salvaged()->keptAfterGap, 200 - lost.ranges()[0].second);
  auto present = seqs(*journal);
  ASSERT_EQ(present.size(), 200 - lost.count() + 1);  // plus the JournalSalvaged record
  auto last = journal->get(201);
  EXPECT_EQ(last->type, RecordType::Observation);
  EXPECT_EQ(last->body, "salvaged: " + journal->salvaged()->cause);
  EXPECT_TRUE(fs::exists(journal->salvaged()->movedTo));
}

TEST(JournalCorruptionTest, TruncatedNewestTableFileRefuseOpenThenSalvageKeepsPrefix) {
  TempDir dir;
  std::string journalDir = dir.sub("journal");
  std::string table = writeTwoTables(journalDir);
  fs::resize_file(table, fs::file_size(table) / 2);
  try {
    Journal::open(journalDir);
    FAIL() << "opened a journal with a truncated table file";
  } catch (const JournalError& e) {
    EXPECT_NE(std::string(e.what()).find(journalDir), std::string::npos) << e.what();
  }
  JournalOptions options;
  options.salvage = true;
  options.bodies.salvaged = [](const SalvageReport& s) { return "salvaged: " + s.cause; };
  auto journal = Journal::open(journalDir, options);
  ASSERT_TRUE(journal->salvaged());
  EXPECT_EQ(journal->salvaged()->keptThrough, 100u);
  EXPECT_EQ(seqs(*journal).size(), 101u);
}

TEST(JournalCorruptionTest, TruncatedWalTailKeepsGapFreePrefix) {
  TempDir dir;
  std::string journalDir = dir.sub("journal");
  writeAndCrash(journalDir, 50);
  std::string wal = largest(filesWithSuffix(journalDir, ".log"));
  fs::resize_file(wal, fs::file_size(wal) - 150);  // a torn final write
  // As when the tear hits writes newer than the high-water mark (it advances once a second; a
  // slow run, e.g. under a sanitizer, may already have covered these records).
  writeHighWaterFile(journalDir, 0);
  auto journal = Journal::open(journalDir);
  auto present = seqs(*journal);
  ASSERT_FALSE(present.empty());
  EXPECT_LT(present.size(), 50u);
  EXPECT_EQ(present.back(), present.size());
  EXPECT_EQ(journal->append(observation(0), Durability::Sync), present.size() + 1);
}

TEST(JournalCorruptionTest, FlippedBytesInWalMiddleRefuseOpen) {
  TempDir dir;
  std::string journalDir = dir.sub("journal");
  writeAndCrash(journalDir, 50);
  std::string wal = largest(filesWithSuffix(journalDir, ".log"));
  flipBytes(wal, fs::file_size(wal) / 2, 8);
  EXPECT_THROW(Journal::open(journalDir), CorruptionError);
  JournalOptions options;
  options.salvage = true;
  auto journal = Journal::open(journalDir, options);
  auto present = seqs(*journal);
  uint64_t kept = journal->salvaged()->keptThrough;
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, 50u);
  EXPECT_EQ(present.size(), kept + 1);
}

TEST(JournalCorruptionTest, CorruptRecordValueIsReportedWithItsSeq) {
  auto storage = std::make_shared<MemoryStorage>();
  {
    auto journal = Journal::open(storage);
    for (int i = 1; i <= 10; ++i) journal->append(observation(i), Durability::Sync);
  }
  damageStoredRecord(*storage, 6);
  try {
    Journal::open(storage);
    FAIL();
  } catch (const CorruptionError& e) {
    EXPECT_EQ(e.seq(), 6u);
  }
}

TEST(JournalCorruptionTest, MissingRecordIsAGapNamingTheSeq) {
  auto storage = std::make_shared<MemoryStorage>();
  {
    auto journal = Journal::open(storage);
    for (int i = 1; i <= 10; ++i) journal->append(observation(i), Durability::Sync);
  }
  storage->write({{Column::Records, encodeSeqKey(4), "", WriteOp::Kind::Delete}}, true);
  try {
    Journal::open(storage);
    FAIL();
  } catch (const CorruptionError& e) {
    EXPECT_EQ(e.seq(), 4u);
    EXPECT_NE(std::string(e.what()).find("gap"), std::string::npos);
  }
}

}  // namespace
}  // namespace rayjournal::wal
