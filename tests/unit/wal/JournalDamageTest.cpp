// One test per class of damage an operator's journal directory can suffer (a lost file, a
// truncated WAL, a bad table block, a broken meta or checkpoint table). Each asserts what a
// plain open does (refuse, naming the cause, and change nothing so that a second start does
// the same), what salvage keeps, and that the salvaged journal reads back gap-free apart from
// the seqs it reports lost.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

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

JournalOptions salvaging() {
  JournalOptions options;
  options.salvage = true;
  return options;
}

// 1..100 and 101..200 in table files of their own (meta and checkpoints too, with a checkpoint
// at 101 covering 100), then 201..250 only in the write-ahead log, and a checkpoint at 251
// (which advances HIGHWATER to 251); then the process dies without a clean close. Runs in a
// fresh process (this binary, JournalDamageWriter below): a forked child of a process that
// already runs RocksDB's background threads would wait for them forever.
void writeJournal(const std::string& dir) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    setenv("RAYJOURNAL_DAMAGE_WRITE", dir.c_str(), 1);
    execl("/proc/self/exe", "wal_test", "--gtest_filter=JournalDamageWriter.*", nullptr);
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writer exited " << status;
}

TEST(JournalDamageWriter, WritesTheJournalTheDamageTestsBreak) {
  const char* dir = getenv("RAYJOURNAL_DAMAGE_WRITE");
  if (!dir) GTEST_SKIP() << "runs only as the writer process of JournalDamageTest";
  auto journal = Journal::open(dir);
  auto& storage = static_cast<RocksStorage&>(journal->storage());
  for (int i = 1; i <= 100; ++i) journal->append(observation(i), Durability::Lazy);
  journal->writeCheckpoint(100, "state through 100");
  storage.flushToFiles();
  for (int i = 102; i <= 200; ++i) journal->append(observation(i), Durability::Lazy);
  storage.flushToFiles();
  for (int i = 201; i <= 250; ++i) journal->append(observation(i), Durability::Sync);
  journal->writeCheckpoint(250, "state through 250");
  _exit(0);
}

// A plain open must refuse with a CorruptionError whose text contains `expected`, twice, and
// leave every file as it was.
void expectRefusedUnchanged(const std::string& dir, const std::string& expected) {
  auto before = snapshot(dir);
  for (int start = 0; start < 2; ++start) {
    try {
      Journal::open(dir);
      FAIL() << "opened a damaged journal";
    } catch (const CorruptionError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(dir), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(snapshot(dir) == before) << "a refused open changed " << dir;
}

// Salvages, then checks the original is byte for byte where salvage moved it, every record is
// either present or reported lost, and the salvaged journal opens plainly afterwards.
std::unique_ptr<Journal> salvageAndCheck(const std::string& dir) {
  auto original = snapshot(dir);
  auto journal = Journal::open(dir, salvaging());
  EXPECT_TRUE(journal->salvaged());
  if (!journal->salvaged()) return journal;
  EXPECT_TRUE(snapshot(journal->salvaged()->movedTo) == original) << "salvage changed the original";
  uint64_t present = 0;
  journal->scan(0, [&](const Record&) { return ++present; });
  EXPECT_EQ(present + journal->lostRanges().count(), journal->latestSeq());
  return journal;
}

// Breaks the first data block of the one table file holding `marker`; returns its path.
std::string damageTheTableHolding(const std::string& dir, const std::string& marker) {
  auto tables = tablesHolding(dir, marker);
  EXPECT_EQ(tables.size(), 1u) << "tables holding " << marker;
  if (tables.empty()) return "no table holds " + marker;
  flipBytes(*tables.begin(), 10, 40);
  return *tables.begin();
}

uint64_t kept(Journal& journal, uint64_t from, uint64_t to) {
  uint64_t n = 0;
  journal.scan(from, [&](const Record& r) { return r.seq <= to && ++n; });
  return n;
}

// Every case starts from the journal writeJournal leaves.
class JournalDamageTest : public ::testing::Test {
 protected:
  void SetUp() override { writeJournal(dir); }
  TempDir tmp;
  std::string dir = tmp.sub("journal");
};

TEST_F(JournalDamageTest, MissingCurrentIsRefusedAndSalvageKeepsEveryRecord) {
  fs::remove(dir + "/CURRENT");
  expectRefusedUnchanged(dir, "CURRENT");
  auto journal = salvageAndCheck(dir);
  EXPECT_TRUE(journal->salvaged()->lost.empty()) << journal->salvaged()->lost.toString();
  EXPECT_EQ(kept(*journal, 1, 251), 251u);
}

TEST_F(JournalDamageTest, MissingManifestIsRefusedAndSalvageKeepsEveryRecord) {
  for (const auto& m : filesWithSuffix(dir, "")) {
    if (fs::path(m).filename().string().rfind("MANIFEST-", 0) == 0) fs::remove(m);
  }
  expectRefusedUnchanged(dir, "MANIFEST");
  auto journal = salvageAndCheck(dir);
  EXPECT_EQ(kept(*journal, 1, 251), 251u);
}

TEST_F(JournalDamageTest, TruncatedWalLosingAcknowledgedRecordsIsRefused) {
  std::string wal = largest(filesWithSuffix(dir, ".log"));
  fs::resize_file(wal, fs::file_size(wal) / 2);
  expectRefusedUnchanged(dir, "acknowledged");
  auto journal = salvageAndCheck(dir);
  const auto& lost = journal->salvaged()->lost;
  ASSERT_EQ(lost.ranges().size(), 1u) << lost.toString();
  EXPECT_GT(lost.ranges()[0].first, 200u);
  EXPECT_EQ(lost.ranges()[0].second, 251u);  // through the high-water mark
  // New records never reuse a lost seq.
  EXPECT_EQ(journal->append(observation(0), Durability::Sync), 253u);  // 252 is JournalSalvaged
}

TEST_F(JournalDamageTest, MissingWalWithAcknowledgedRecordsIsRefused) {
  for (const auto& wal : filesWithSuffix(dir, ".log")) fs::remove(wal);
  expectRefusedUnchanged(dir, "acknowledged");
  auto journal = salvageAndCheck(dir);
  EXPECT_EQ(journal->salvaged()->lost.toString(), "201-251");
  EXPECT_EQ(kept(*journal, 1, 200), 200u);
}

TEST_F(JournalDamageTest, DamagedTableFooterLosesOnlyThatTable) {
  // The two records tables are the largest; the one holding 102..200 has the higher file
  // number. Break its footer.
  auto tables = filesWithSuffix(dir, ".sst");
  std::string first = largest(tables);
  tables.erase(first);
  std::string table = std::max(first, largest(tables));
  flipBytes(table, fs::file_size(table) - 20, 12);
  expectRefusedUnchanged(dir, table);
  auto journal = salvageAndCheck(dir);
  ASSERT_TRUE(journal->salvaged());
  EXPECT_FALSE(journal->salvaged()->lost.empty());
  EXPECT_GE(journal->salvaged()->keptThrough, 100u);
  EXPECT_EQ(journal->salvaged()->keptAfterGap, 51u);  // 201..251 from the WAL
  bool named = false;
  for (const auto& p : journal->salvaged()->problems) named = named || p.find(table) != std::string::npos;
  EXPECT_TRUE(named) << "salvage report does not name " << table;
}

TEST_F(JournalDamageTest, DamagedCheckpointTableDropsUntrustedCheckpoints) {
  expectRefusedUnchanged(dir, damageTheTableHolding(dir, "state through"));
  auto journal = salvageAndCheck(dir);
  for (uint64_t seq : journal->checkpointSeqs()) {
    auto cp = journal->checkpointAt(seq);
    ASSERT_TRUE(cp);
    EXPECT_TRUE(journal->get(seq)) << "checkpoint at seq " << seq << " without its record";
  }
  EXPECT_EQ(kept(*journal, 1, 251), 251u);
}

TEST_F(JournalDamageTest, DamagedMetaTableIsRefusedAndSalvageKeepsEveryRecord) {
  expectRefusedUnchanged(dir, damageTheTableHolding(dir, "instance_id"));
  auto journal = salvageAndCheck(dir);
  EXPECT_EQ(kept(*journal, 1, 251), 251u);
  EXPECT_EQ(journal->append(observation(0), Durability::Sync), 253u);  // 252 is JournalSalvaged
}

TEST(JournalMetaDamageTest, LostMetaWithAHighWaterMarkIsNeverANewJournal) {
  auto storage = std::make_shared<MemoryStorage>();
  {
    auto journal = Journal::open(storage);
    journal->append(observation(1), Durability::Sync);
    journal->writeCheckpoint(1, "s");
  }
  for (const auto* key : {"format_version", "instance_id", "first_seq", "epoch"})
    storage->write({{Column::Meta, key, "", WriteOp::Kind::Delete}}, true);
  for (uint64_t seq : {1, 2})
    storage->write({{Column::Records, encodeSeqKey(seq), "", WriteOp::Kind::Delete}}, true);
  EXPECT_THROW(Journal::open(storage), CorruptionError);
  EXPECT_THROW(Journal::open(storage), CorruptionError);
}

// History behind the newest checkpoint is not read at open, so a bad block there lets the
// journal open; the scrub finds it, names the table file, and goes on past it.
TEST_F(JournalDamageTest, BadBlockInOldHistoryIsFoundByTheScrub) {
  auto tables = tablesHolding(dir, "namerecords");  // the properties block names the family
  ASSERT_EQ(tables.size(), 2u);
  std::string oldest = *tables.begin();  // 1..100
  flipBytes(oldest, fs::file_size(oldest) / 3, 32);
  auto journal = Journal::open(dir);
  std::vector<std::string> found;
  uint64_t next = 1;
  for (int step = 0; step < 300 && next <= journal->latestSeq(); ++step) {
    auto result = journal->scrub(next, 50);
    found.insert(found.end(), result.corrupt.begin(), result.corrupt.end());
    ASSERT_GT(result.next, next) << "the scrub is stuck at seq " << next;
    next = result.next;
  }
  EXPECT_GT(next, journal->latestSeq()) << "the scrub did not get past the bad block";
  ASSERT_FALSE(found.empty());
  EXPECT_NE(found[0].find(oldest), std::string::npos) << found[0];
  EXPECT_EQ(journal->stats().scrubCorrupt, found.size());
}

TEST_F(JournalDamageTest, InterruptedSalvageIsFinishedByTheNextStart) {
  fs::remove(dir + "/CURRENT");
  std::string movedTo;
  {
    auto journal = Journal::open(dir, salvaging());
    movedTo = journal->salvaged()->movedTo;
  }
  // As if the process died between the two renames of a salvage.
  fs::rename(dir, dir + ".salvage-tmp");
  { std::ofstream(dir + ".salvage-tmp/SALVAGED") << "x\n"; }
  auto journal = Journal::open(dir);
  EXPECT_GE(journal->latestSeq(), 252u);
  EXPECT_TRUE(fs::exists(movedTo));
}

TEST_F(JournalDamageTest, WalChecksumErrorNamesTheFileAndOffset) {
  std::string wal = largest(filesWithSuffix(dir, ".log"));
  flipBytes(wal, fs::file_size(wal) / 3, 8);
  try {
    Journal::open(dir);
    FAIL() << "opened a journal with a damaged WAL";
  } catch (const CorruptionError& e) {
    EXPECT_NE(std::string(e.what()).find(wal + " offset "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("intact up to journal seq "), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace rayjournal::wal
