// A second operator on the same journal volume (a forced Pod deletion starts the replacement
// while the old container still runs) waits for the lock instead of failing or acting, and the
// shard a replica takes from its pod name.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <future>

#include "events/JournalBodies.h"
#include "operator/RunnerSupport.h"
#include "operator/ShardLeases.h"
#include "support/CapturedLog.h"
#include "support/TempDir.h"
#include "wal/JournalError.h"
#include "wal/RocksStorage.h"

namespace rayjournal::operator_ {
namespace {

std::unique_ptr<wal::Journal> openJournal(const std::string& dir) {
  return wal::Journal::open(dir, events::journalOptions({}));
}

// Another process holding the journal's lock as RocksDB takes it: a POSIX record lock over the
// whole LOCK file. The fork()ed child calls only async-signal-safe functions.
class ForeignLockHolder {
 public:
  explicit ForeignLockHolder(const std::string& dir) {
    const std::string path = dir + "/LOCK";
    if (::pipe(locked_) != 0 || ::pipe(release_) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) holdUntilReleased(path.c_str());
    char c;
    if (::read(locked_[0], &c, 1) != 1) throw std::runtime_error("the lock holder did not lock");
  }
  ~ForeignLockHolder() { release(); }
  void release() {
    if (pid_ <= 0) return;
    if (::write(release_[1], "x", 1) != 1) ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }

 private:
  [[noreturn]] void holdUntilReleased(const char* path) {
    int fd = ::open(path, O_RDWR | O_CREAT, 0644);
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    if (fd < 0 || ::fcntl(fd, F_SETLK, &lock) != 0) ::_exit(1);
    char c = 'x';
    if (::write(locked_[1], &c, 1) != 1 || ::read(release_[0], &c, 1) != 1) ::_exit(1);
    ::_exit(0);
  }
  int locked_[2], release_[2];
  pid_t pid_ = 0;
};

TEST(JournalLockWaitTest, ALockedJournalIsWaitedForAndOpenedOnceItsHolderIsGone) {
  rayjournal::testing::TempDir dir;
  const uint64_t earlierEpoch = openJournal(dir.sub("journal"))->epoch();
  ForeignLockHolder holder(dir.sub("journal"));
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
  holder.release();
  auto [journal, code] = opening.get();
  ASSERT_NE(journal, nullptr) << log.text();
  EXPECT_EQ(code, 0);
  EXPECT_EQ(waitingChanges.load(), 2) << "the wait started and ended once";
  EXPECT_EQ(journal->epoch(), earlierEpoch + 1) << "an epoch of its own, after the holder's";
  EXPECT_TRUE((log.text().find("is locked by another process") != std::string::npos)) << log.text();
  EXPECT_TRUE((log.text().find("waiting for it to exit") != std::string::npos)) << log.text();
  EXPECT_TRUE((log.text().find("the lock is ours") != std::string::npos)) << log.text();
}

TEST(JournalLockWaitTest, AStopWhileWaitingGivesUpWithoutOpening) {
  rayjournal::testing::TempDir dir;
  openJournal(dir.sub("journal"));
  ForeignLockHolder holder(dir.sub("journal"));
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

TEST(JournalLockWaitTest, TheLockProbeSeesAnotherProcessesLockWithoutReadingTheJournal) {
  rayjournal::testing::TempDir dir;  // a LOCK file and nothing else: no journal to read
  EXPECT_NO_THROW(wal::RocksStorage::throwIfLockedByAnotherProcess(dir.path()));
  ForeignLockHolder holder(dir.path());
  EXPECT_THROW(wal::RocksStorage::throwIfLockedByAnotherProcess(dir.path()),
               wal::JournalLockedError);
  holder.release();
  EXPECT_NO_THROW(wal::RocksStorage::throwIfLockedByAnotherProcess(dir.path()));
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
