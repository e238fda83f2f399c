// One key per record: each record points back at its object's previous record, the journal
// keeps every object's newest record (saved with checkpoints), and the by_object index holds
// only records of format 1 and of salvages. Named after what would go wrong without it.
#include <gtest/gtest.h>

#include "support/JournalFiles.h"
#include "support/TempDir.h"
#include "wal/Journal.h"
#include "wal/MemoryStorage.h"
#include "wal/ObjectHeads.h"
#include "wal/RecordCodec.h"

namespace rayjournal::wal {
namespace {

using rayjournal::testing::observation;  // object job-(i % 7)

std::vector<uint64_t> historyOf(Journal& journal, int job, uint64_t from = 0) {
  std::vector<uint64_t> seqs;
  journal.scanObject({"RayJob", "default", "job-" + std::to_string(job), ""}, from,
                     [&](const Record& r) {
                       EXPECT_EQ(r.object.name, "job-" + std::to_string(job));
                       seqs.push_back(r.seq);
                       return true;
                     });
  return seqs;
}

// Every seq in [from, through] whose observation(i) is about job (seq == i here).
std::vector<uint64_t> expected(int job, uint64_t from, uint64_t through) {
  std::vector<uint64_t> seqs;
  for (uint64_t s = from; s <= through; ++s)
    if (s % 7 == uint64_t(job)) seqs.push_back(s);
  return seqs;
}

size_t keysIn(JournalStorage& storage, Column column) {
  size_t n = 0;
  storage.scan(column, "", [&](std::string_view, std::string_view) { return ++n > 0; });
  return n;
}

TEST(ObjectChainTest, AnAppendWritesOneKeyAndNoIndexEntry) {
  auto storage = std::make_shared<MemoryStorage>();
  auto journal = Journal::open(storage);
  for (int i = 1; i <= 20; ++i) journal->append(observation(i), Durability::Lazy);
  std::vector<Record> batch;
  for (int i = 21; i <= 40; ++i) batch.push_back(observation(i));
  journal->appendBatch(std::move(batch), Durability::Sync);
  EXPECT_EQ(keysIn(*storage, Column::Records), 40u);
  EXPECT_EQ(keysIn(*storage, Column::ByObject), 0u);
  for (int job = 0; job < 7; ++job) EXPECT_EQ(historyOf(*journal, job), expected(job, 1, 40));
  EXPECT_EQ(historyOf(*journal, 3, 20), expected(3, 20, 40));
  EXPECT_EQ(journal->get(10)->previous, 3u);
  EXPECT_EQ(journal->get(3)->previous, 0u);
  EXPECT_TRUE(journal->checkIndex().empty());
}

TEST(ObjectChainTest, HistoryIsFoundAfterARestartFromTheHeadsSavedWithTheCheckpoint) {
  rayjournal::testing::TempDir dir;
  {
    auto journal = Journal::open(dir.path());
    for (int i = 1; i <= 30; ++i) journal->append(observation(i), Durability::Lazy);
    journal->writeCheckpoint(30, "state");  // seq 31
    for (int i = 32; i <= 45; ++i) journal->append(observation(i), Durability::Lazy);
  }
  auto journal = Journal::open(dir.path());
  auto saved = ObjectHeads::decode(*journal->storage().get(Column::Meta, "object_heads"));
  ASSERT_TRUE(saved);
  EXPECT_EQ(saved->through, 31u);
  EXPECT_EQ(saved->find("RayJob/default/job-2"), 30u);
  for (int job = 0; job < 7; ++job) {
    auto seqs = expected(job, 1, 45);
    std::erase(seqs, 31u);  // the checkpoint record
    EXPECT_EQ(historyOf(*journal, job), seqs);
  }
  journal->append(observation(46), Durability::Sync);
  EXPECT_EQ(journal->get(46)->previous, 39u);  // linked to a record written before the restart
}

TEST(ObjectChainTest, DamagedOrMissingSavedHeadsAreRebuiltFromTheRecords) {
  for (bool remove : {false, true}) {
    auto storage = std::make_shared<MemoryStorage>();
    {
      auto journal = Journal::open(storage);
      for (int i = 1; i <= 20; ++i) journal->append(observation(i), Durability::Sync);
      journal->writeCheckpoint(20, "state");
    }
    std::string heads = *storage->get(Column::Meta, "object_heads");
    heads[heads.size() / 2] ^= 1;
    storage->write({{Column::Meta, "object_heads", heads,
                     remove ? WriteOp::Kind::Delete : WriteOp::Kind::Put}},
                   true);
    auto journal = Journal::open(storage);
    EXPECT_EQ(historyOf(*journal, 6), expected(6, 1, 20)) << (remove ? "removed" : "damaged");
    journal->append(observation(22), Durability::Sync);  // job-1, after 15
    EXPECT_EQ(journal->get(22)->previous, 15u);
  }
}

// Counts the records an open reads: a journal without a checkpoint has its whole history as
// the tail to check, and reading 10 M records twice doubled the restart (stop 44's recovery
// bench: 25-42 s before heads, 55 s after).
class CountingStorage : public MemoryStorage {
 public:
  void scan(Column column, std::string_view from, const ScanVisitor& visit) override {
    MemoryStorage::scan(column, from, [&](std::string_view k, std::string_view v) {
      if (column == Column::Records) ++recordsRead;
      return visit(k, v);
    });
  }
  size_t recordsRead = 0;
};

TEST(ObjectChainTest, AnOpenReadsEachTailRecordOnceAndFindsTheHeadsInIt) {
  auto storage = std::make_shared<CountingStorage>();
  {
    auto journal = Journal::open(storage);
    for (int i = 1; i <= 50; ++i) journal->append(observation(i), Durability::Sync);
  }
  storage->recordsRead = 0;
  auto journal = Journal::open(storage);
  EXPECT_EQ(storage->recordsRead, 50u);
  journal->append(observation(51), Durability::Sync);  // job-2, after 44
  EXPECT_EQ(journal->get(51)->previous, 44u);
  EXPECT_EQ(historyOf(*journal, 2), expected(2, 1, 51));
  EXPECT_TRUE(journal->checkIndex().empty());
}

// A journal written before records pointed back: meta format_version 1, records of format 1
// (no back-pointer) and an index entry for each.
std::shared_ptr<MemoryStorage> formatOneJournal(int records) {
  auto storage = std::make_shared<MemoryStorage>();
  std::vector<WriteOp> ops = {{Column::Meta, "format_version", "1"},
                              {Column::Meta, "instance_id", "0123456789abcdef"},
                              {Column::Meta, "first_seq", "1"},
                              {Column::Meta, "epoch", "1"}};
  for (int i = 1; i <= records; ++i) {
    Record r = observation(i);
    r.seq = i;
    r.epoch = 1;
    r.timeMs = 1000 + i;
    ops.push_back({Column::Records, encodeSeqKey(i), encodeRecord(r)});
    ops.push_back({Column::ByObject, encodeObjectIndexKey(r.object.indexKey(), i), ""});
  }
  storage->write(ops, true);
  return storage;
}

TEST(ObjectChainTest, AFormatOneJournalIsReadAsItIsAndUpgradedByAWritableOpen) {
  auto storage = formatOneJournal(20);
  EXPECT_EQ(uint8_t((*storage->get(Column::Records, encodeSeqKey(5)))[0]), 1);
  {
    JournalOptions readOnly;
    readOnly.readOnly = true;
    auto journal = Journal::open(storage, readOnly);
    EXPECT_EQ(historyOf(*journal, 4), expected(4, 1, 20));
    EXPECT_FALSE(journal->get(4)->previous);
  }
  EXPECT_EQ(*storage->get(Column::Meta, "format_version"), "1");  // a reader changes nothing
  auto journal = Journal::open(storage);
  EXPECT_EQ(*storage->get(Column::Meta, "format_version"), std::to_string(kJournalFormatVersion));
  for (int i = 21; i <= 35; ++i) journal->append(observation(i), Durability::Sync);
  EXPECT_EQ(keysIn(*storage, Column::ByObject), 20u);  // no new entries
  EXPECT_EQ(journal->get(25)->previous, 0u);            // the chain starts after the upgrade
  EXPECT_EQ(journal->get(32)->previous, 25u);
  for (int job = 0; job < 7; ++job) EXPECT_EQ(historyOf(*journal, job), expected(job, 1, 35));
  EXPECT_TRUE(journal->checkIndex().empty());
  journal.reset();
  journal = Journal::open(storage);
  EXPECT_EQ(historyOf(*journal, 4), expected(4, 1, 35));
}

TEST(ObjectChainTest, PruningDropsTheIndexEntriesAndHeadsBelowTheCut) {
  auto storage = formatOneJournal(20);
  auto journal = Journal::open(storage);
  for (int i = 21; i <= 40; ++i) journal->append(observation(i), Durability::Sync);
  journal->writeCheckpoint(40, "state");
  journal->prune(30);
  EXPECT_EQ(keysIn(*storage, Column::ByObject), 0u);
  for (int job = 0; job < 7; ++job) EXPECT_EQ(historyOf(*journal, job), expected(job, 30, 40));
  EXPECT_TRUE(journal->checkIndex().empty());
}

TEST(ObjectChainTest, AFailedWriteLeavesNoHeadPointingAtIt) {
  auto storage = std::make_shared<MemoryStorage>();
  auto journal = Journal::open(storage);
  for (int i = 1; i <= 10; ++i) journal->append(observation(i), Durability::Sync);
  storage->failNextWrites(1);
  EXPECT_THROW(journal->append(observation(11), Durability::Sync), JournalError);
  EXPECT_EQ(journal->append(observation(11), Durability::Sync), 11u);  // the seq is reused
  EXPECT_EQ(journal->get(11)->previous, 4u);
  EXPECT_EQ(historyOf(*journal, 4), expected(4, 1, 11));
}

TEST(ObjectChainTest, ABrokenBackPointerIsReportedAndTheObjectIndexedByReindex) {
  auto storage = std::make_shared<MemoryStorage>();
  auto journal = Journal::open(storage);
  for (int i = 1; i <= 30; ++i) journal->append(observation(i), Durability::Sync);
  Record r = *journal->get(17);  // job-3: 3, 10, 17, 24
  r.previous = 16;               // a record of job-2
  storage->write({{Column::Records, encodeSeqKey(17), encodeRecord(r)},
                  {Column::ByObject, encodeObjectIndexKey("RayJob/default/ghost", 12), ""}},
                 true);
  EXPECT_EQ(historyOf(*journal, 3), (std::vector<uint64_t>{17, 24}));  // 3 and 10 unreachable
  auto problems = journal->checkIndex();
  ASSERT_EQ(problems.size(), 4u);
  EXPECT_NE(problems[0].find("RayJob/default/ghost points at seq 12"), std::string::npos)
      << problems[0];
  EXPECT_NE(problems[1].find("record seq 17 of RayJob/default/job-3 points back at seq 16 "
                             "instead of seq 10"),
            std::string::npos)
      << problems[1];
  EXPECT_NE(problems[2].find("record seq 3 of RayJob/default/job-3 is missing"),
            std::string::npos)
      << problems[2];
  EXPECT_NE(problems[3].find("record seq 10"), std::string::npos) << problems[3];
  EXPECT_EQ(journal->rebuildIndex(), 2u);  // seqs 3 and 10
  EXPECT_EQ(historyOf(*journal, 3), expected(3, 1, 30));
  ASSERT_EQ(journal->checkIndex().size(), 1u);  // the bad pointer stays in the record
}

TEST(ObjectChainTest, APointerToALostRecordIsNoFaultButNeedsTheIndexBelowIt) {
  auto storage = std::make_shared<MemoryStorage>();
  {
    auto journal = Journal::open(storage);
    for (int i = 1; i <= 30; ++i) journal->append(observation(i), Durability::Sync);
  }
  // What a salvage leaves: seq 17 lost, the records before it indexed.
  storage->write({{Column::Records, encodeSeqKey(17), "", WriteOp::Kind::Delete},
                  {Column::Meta, "lost_ranges", "17-17"},
                  {Column::ByObject, encodeObjectIndexKey("RayJob/default/job-3", 3), ""}},
                 true);
  auto journal = Journal::open(storage);
  auto problems = journal->checkIndex();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("record seq 10 of RayJob/default/job-3 is missing"),
            std::string::npos)
      << problems[0];
  EXPECT_EQ(historyOf(*journal, 3), (std::vector<uint64_t>{3, 24}));
  journal->rebuildIndex();
  EXPECT_TRUE(journal->checkIndex().empty());
  EXPECT_EQ(historyOf(*journal, 3), (std::vector<uint64_t>{3, 10, 24}));
}

TEST(ObjectChainTest, SavedHeadsRoundTripAndRefuseDamage) {
  ObjectHeads heads;
  heads.note("RayJob/a/b", 7);
  heads.note("RayJob/a/b", 5);  // older: ignored
  heads.note("RayCluster/a/c", 9);
  heads.through = 12;
  auto back = ObjectHeads::decode(heads.encode());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->through, 12u);
  EXPECT_EQ(back->find("RayJob/a/b"), 7u);
  EXPECT_EQ(back->find("RayCluster/a/c"), 9u);
  std::string bytes = heads.encode();
  EXPECT_FALSE(ObjectHeads::decode(bytes.substr(0, bytes.size() - 1)));
  bytes[9] ^= 1;
  EXPECT_FALSE(ObjectHeads::decode(bytes));
}

}  // namespace
}  // namespace rayjournal::wal
