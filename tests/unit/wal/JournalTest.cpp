#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mutex>
#include <set>
#include <thread>

#include "support/TempDir.h"
#include "wal/Journal.h"
#include "wal/JournalError.h"
#include "wal/MemoryStorage.h"
#include "wal/RocksStorage.h"

namespace rayjournal::wal {
namespace {

using rayjournal::testing::TempDir;

Record intent(const std::string& name, const std::string& action) {
  Record r;
  r.type = RecordType::Intent;
  r.object = {"RayJob", "default", name, "uid-" + name};
  r.attempt = 1;
  r.body = action;  // the journal carries bodies as bytes it does not read
  return r;
}

std::vector<Record> readAll(Journal& journal) {
  std::vector<Record> out;
  journal.scan(0, [&](const Record& r) {
    out.push_back(r);
    return true;
  });
  return out;
}

TEST(JournalTest, AppendAssignsGapFreeSeqsAndReadsBack) {
  TempDir dir;
  auto journal = Journal::open(dir.path());
  EXPECT_EQ(journal->append(intent("a", "CreateRayCluster"), Durability::Sync), 1u);
  EXPECT_EQ(journal->append(intent("a", "CreateSubmitterJob"), Durability::Lazy), 2u);
  EXPECT_EQ(journal->appendBatch({intent("b", "x"), intent("b", "y")}, Durability::Sync), 3u);
  EXPECT_EQ(journal->latestSeq(), 4u);
  auto r = journal->get(2);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "CreateSubmitterJob");
  EXPECT_EQ(r->epoch, journal->epoch());
  EXPECT_GT(r->timeMs, 0);
  EXPECT_EQ(readAll(*journal).size(), 4u);
}

// rayjournal-replay timeline --follow: a reader opened beside the running operator takes in
// what it appends afterwards, in order, and the object's history grows with it.
TEST(JournalTest, AFollowerTakesInWhatTheWriterAppendsAfterItOpened) {
  TempDir dir;
  auto writer = Journal::open(dir.path());
  for (int i = 0; i < 5; ++i) writer->append(intent("a", "before"), Durability::Lazy);
  writer->sync();
  JournalOptions options;
  options.readOnly = options.follow = true;
  auto follower = Journal::open(dir.path(), options);
  const uint64_t opened = follower->latestSeq();
  for (int i = 0; i < 3; ++i) writer->append(intent("a", "after"), Durability::Lazy);
  writer->sync();
  EXPECT_EQ(follower->latestSeq(), opened);
  EXPECT_EQ(follower->refresh(), writer->latestSeq());
  std::vector<std::string> bodies;
  follower->scan(opened + 1, [&](const Record& r) {
    bodies.push_back(r.body);
    return true;
  });
  EXPECT_EQ(bodies, std::vector<std::string>(3, "after"));
  size_t history = 0;
  follower->scanObject({"RayJob", "default", "a", ""}, 0, [&](const Record&) { return ++history; });
  EXPECT_EQ(history, 8u);
  // A journal that is not following has nothing to take in.
  JournalOptions plain;
  plain.readOnly = true;
  EXPECT_EQ(Journal::open(dir.path(), plain)->refresh(), writer->latestSeq());
}

TEST(JournalTest, SeqContinuesAndEpochGrowsAcrossReopen) {
  TempDir dir;
  uint64_t firstEpoch;
  {
    auto journal = Journal::open(dir.path());
    firstEpoch = journal->epoch();
    for (int i = 0; i < 10; ++i) journal->append(intent("a", "x"), Durability::Lazy);
  }
  auto journal = Journal::open(dir.path());
  EXPECT_EQ(journal->epoch(), firstEpoch + 1);
  EXPECT_EQ(journal->latestSeq(), 10u);
  EXPECT_EQ(journal->append(intent("a", "y"), Durability::Sync), 11u);
  auto records = readAll(*journal);
  ASSERT_EQ(records.size(), 11u);
  EXPECT_EQ(records.back().epoch, firstEpoch + 1);
}

TEST(JournalTest, PerObjectIterationSeesOnlyThatObject) {
  TempDir dir;
  auto journal = Journal::open(dir.path());
  for (int i = 0; i < 30; ++i)
    journal->append(intent(i % 3 == 0 ? "a" : "ab", "x"), Durability::Lazy);
  std::vector<uint64_t> seqs;
  journal->scanObject({"RayJob", "default", "a", ""}, 0, [&](const Record& r) {
    EXPECT_EQ(r.object.name, "a");
    seqs.push_back(r.seq);
    return true;
  });
  ASSERT_EQ(seqs.size(), 10u);
  EXPECT_EQ(seqs.front(), 1u);
  EXPECT_EQ(seqs.back(), 28u);
  std::vector<uint64_t> later;
  journal->scanObject({"RayJob", "default", "a", ""}, 20, [&](const Record& r) {
    later.push_back(r.seq);
    return true;
  });
  EXPECT_EQ(later, (std::vector<uint64_t>{22, 25, 28}));
}

TEST(JournalTest, ConcurrentSyncAppendersShareSyncs) {
  TempDir dir;
  auto journal = Journal::open(dir.path());
  constexpr int kThreads = 32, kPerThread = 50;
  std::vector<std::thread> threads;
  std::mutex mu;
  std::set<uint64_t> seqs;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        uint64_t seq = journal->append(intent("job-" + std::to_string(t), "x"), Durability::Sync);
        std::lock_guard lock(mu);
        seqs.insert(seq);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(seqs.size(), size_t(kThreads * kPerThread));
  EXPECT_EQ(*seqs.rbegin(), uint64_t(kThreads * kPerThread));
  auto stats = journal->stats();
  EXPECT_LT(stats.syncs, stats.appends) << "group commit never grouped";
}

// A child process appends from 16 threads and reports each acknowledged sync seq through a pipe;
// it is killed with SIGKILL mid-stream. Every acknowledged record must survive the reopen.
TEST(JournalTest, AcknowledgedSyncRecordsSurviveSigkill) {
  TempDir dir;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    auto journal = Journal::open(dir.path());
    std::vector<std::thread> threads;
    for (int t = 0; t < 16; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0;; ++i) {
          uint64_t seq = journal->append(intent("job-" + std::to_string(t), "x"), Durability::Sync);
          ssize_t n = write(fds[1], &seq, sizeof(seq));
          (void)n;
        }
      });
    }
    for (auto& t : threads) t.join();
    _exit(0);
  }
  close(fds[1]);
  std::vector<uint64_t> acked;
  uint64_t seq;
  while (acked.size() < 400 && read(fds[0], &seq, sizeof(seq)) == sizeof(seq)) acked.push_back(seq);
  kill(child, SIGKILL);
  int status;
  waitpid(child, &status, 0);
  while (read(fds[0], &seq, sizeof(seq)) == sizeof(seq)) acked.push_back(seq);
  close(fds[0]);
  ASSERT_GE(acked.size(), 400u);

  auto journal = Journal::open(dir.path());
  auto records = readAll(*journal);  // throws on any gap
  std::set<uint64_t> present;
  for (const auto& r : records) present.insert(r.seq);
  for (uint64_t s : acked) EXPECT_TRUE(present.count(s)) << "acknowledged seq " << s << " lost";
}

TEST(JournalTest, LazyRecordsAreLostOnPowerLossOnlyWithoutALaterSync) {
  JournalOptions options;
  options.lazyFlushInterval = std::chrono::milliseconds(0);
  auto crashed = std::make_shared<MemoryStorage>();
  {
    auto journal = Journal::open(crashed, options);
    journal->append(intent("a", "lazy-1"), Durability::Lazy);
    journal->append(intent("a", "sync-2"), Durability::Sync);
    journal->append(intent("a", "lazy-3"), Durability::Lazy);
    crashed->dropUnsynced();
    crashed->powerOn();
    auto reopened = Journal::open(crashed, options);
    auto records = readAll(*reopened);
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0].body, "lazy-1");  // covered by the later sync write
    EXPECT_EQ(records[1].body, "sync-2");
    EXPECT_EQ(reopened->append(intent("a", "next"), Durability::Sync), 3u);
  }
}

TEST(JournalTest, FailedWriteConsumesNoSeqAndLosesNothingJournaled) {
  auto storage = std::make_shared<MemoryStorage>();
  auto journal = Journal::open(storage);
  journal->append(intent("a", "x"), Durability::Sync);
  storage->failNextWrites(1);
  EXPECT_THROW(journal->append(intent("a", "y"), Durability::Sync), JournalError);
  EXPECT_EQ(journal->append(intent("a", "z"), Durability::Sync), 2u);
  auto records = readAll(*journal);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].body, "z");
}

// Appenders grouped into one failed storage write each get an error object of their own: a
// shared one was freed by whichever appender let go of it last while another could still be
// reading its message (TSan saw it in the full-disk scenario).
TEST(JournalTest, EveryAppenderInAFailedGroupOwnsItsError) {
  auto storage = std::make_shared<MemoryStorage>();
  auto journal = Journal::open(storage);
  storage->failNextWrites(1 << 30);
  constexpr int kThreads = 6, kAppends = 300;
  std::mutex mu;
  std::set<const void*> objects;  // every error caught, all kept alive until the end
  std::vector<std::exception_ptr> kept;
  size_t named = 0;
  auto appendConcurrently = [&] {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kAppends; ++i) {
          try {
            journal->append(intent("t" + std::to_string(t), "x"), Durability::Sync);
          } catch (const JournalError& e) {
            std::lock_guard lock(mu);
            objects.insert(&e);
            kept.push_back(std::current_exception());
            named += std::string(e.what()).find("no space left") != std::string::npos;
          }
        }
      });
    }
    for (auto& t : threads) t.join();
  };
  // Until some appenders have shared a failed write (a round usually has them, not always).
  for (int round = 0; round < 100 && journal->stats().failedWrites == kept.size(); ++round)
    appendConcurrently();
  ASSERT_LT(journal->stats().failedWrites, kept.size()) << "no two appenders shared a write";
  EXPECT_EQ(named, kept.size());
  EXPECT_EQ(objects.size(), kept.size()) << "appenders of one group share an error object";
  EXPECT_TRUE(journal->unwritable().has_value());
}

TEST(JournalTest, SecondOpenerGetsLockedErrorNamingDirectory) {
  TempDir dir;
  auto journal = Journal::open(dir.path());
  try {
    Journal::open(dir.path());
    FAIL() << "second open succeeded";
  } catch (const JournalError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(dir.path()), std::string::npos) << what;
    EXPECT_NE(what.find("locked"), std::string::npos) << what;
  }
}

TEST(JournalTest, NewerJournalFormatIsRefusedNamingBothVersions) {
  auto storage = std::make_shared<MemoryStorage>();
  Journal::open(storage).reset();
  storage->write({{Column::Meta, "format_version", "9"}}, true);
  try {
    Journal::open(storage);
    FAIL();
  } catch (const JournalError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("format version 9"), std::string::npos) << what;
    EXPECT_NE(what.find("up to version " + std::to_string(kJournalFormatVersion)),
              std::string::npos)
        << what;
  }
}

TEST(JournalTest, CheckpointsStoreStateAndRestartFindsNewest) {
  TempDir dir;
  {
    auto journal = Journal::open(dir.path());
    for (int i = 0; i < 5; ++i) journal->append(intent("a", "x"), Durability::Lazy);
    journal->writeCheckpoint(5, "state-at-5");
    journal->append(intent("a", "y"), Durability::Lazy);
    journal->writeCheckpoint(7, "state-at-7");
  }
  auto journal = Journal::open(dir.path());
  auto cp = journal->latestCheckpoint();
  ASSERT_TRUE(cp);
  EXPECT_EQ(cp->seq, 8u);
  EXPECT_EQ(cp->coversThrough, 7u);
  EXPECT_EQ(cp->state, "state-at-7");
  EXPECT_EQ(journal->get(8)->type, RecordType::Checkpoint);
  EXPECT_EQ(journal->checkpointSeqs(), (std::vector<uint64_t>{6, 8}));
}

// The open's strict pass reads the newest checkpoint and hands it to the first reader (a restart
// reads tens of MB once); it must never stand in for a checkpoint written after the open.
TEST(JournalTest, TheCheckpointReadAtOpenNeverHidesANewerOne) {
  TempDir dir;
  {
    auto journal = Journal::open(dir.path());
    journal->append(intent("a", "x"), Durability::Lazy);
    journal->writeCheckpoint(1, "state-at-1");
  }
  auto journal = Journal::open(dir.path());
  journal->append(intent("a", "y"), Durability::Lazy);
  journal->writeCheckpoint(3, "state-at-3");
  auto cp = journal->latestCheckpoint();
  ASSERT_TRUE(cp);
  EXPECT_EQ(cp->state, "state-at-3");
  EXPECT_EQ(journal->latestCheckpoint()->state, "state-at-3") << "read again from storage";
  journal.reset();
  auto again = Journal::open(dir.path());
  EXPECT_EQ(again->latestCheckpoint()->coversThrough, 3u);
  EXPECT_EQ(again->latestCheckpoint()->coversThrough, 3u) << "the second read finds it too";
}

TEST(JournalTest, PruneDropsOldRecordsAndTheirIndexEntries) {
  TempDir dir;
  auto journal = Journal::open(dir.path());
  for (int i = 0; i < 20; ++i) journal->append(intent(i % 2 ? "a" : "b", "x"), Durability::Lazy);
  EXPECT_THROW(journal->prune(10), JournalError);  // no checkpoint covers it yet
  journal->writeCheckpoint(20, "s");               // seq 21
  journal->prune(15);
  EXPECT_EQ(journal->firstSeq(), 15u);
  EXPECT_FALSE(journal->get(14));
  EXPECT_TRUE(journal->get(15));
  auto records = readAll(*journal);
  EXPECT_EQ(records.front().seq, 15u);
  EXPECT_EQ(records.size(), 7u);
  int count = 0;
  journal->scanObject({"RayJob", "default", "a", ""}, 0, [&](const Record& r) {
    EXPECT_GE(r.seq, 15u);
    ++count;
    return true;
  });
  EXPECT_EQ(count, 3);  // 16, 18, 20
  journal.reset();
  journal = Journal::open(dir.path());
  EXPECT_EQ(journal->firstSeq(), 15u);
  EXPECT_EQ(journal->append(intent("a", "z"), Durability::Sync), 22u);
}


// A checkpoint's state goes to the storage as a borrowed tail of its value, not copied: both
// storages store value then tail, and neither keeps the borrowed bytes past the write (the
// memory storage holds unsynced writes until a sync).
TEST(JournalTest, AValueTailIsStoredAfterTheValueAndNotBorrowedPastTheWrite) {
  TempDir dir;
  auto rocks = RocksStorage::open(dir.path(), RocksStorage::Mode::Normal);
  MemoryStorage memory;
  for (JournalStorage* storage : std::initializer_list<JournalStorage*>{rocks.get(), &memory}) {
    std::string state(100000, 's');
    storage->write({{Column::Checkpoints, "k", "covers", WriteOp::Kind::Put, state}}, false);
    state.assign(state.size(), 'x');  // the borrowed bytes change after the write
    storage->sync();
    EXPECT_EQ(storage->get(Column::Checkpoints, "k"), "covers" + std::string(100000, 's'))
        << storage->describe();
  }
  memory.dropUnsynced();  // a power loss: what is read now is what the sync made durable
  memory.powerOn();
  EXPECT_EQ(memory.get(Column::Checkpoints, "k"), "covers" + std::string(100000, 's'));
}

}  // namespace
}  // namespace rayjournal::wal
