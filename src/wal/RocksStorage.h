// JournalStorage on RocksDB: one column family per Column, WAL on, checksums verified.
// Thread-safe. Holds RocksDB's directory lock for its lifetime; the holder's pid and host are
// kept in <dir>/OWNER so that a second opener's error can name them.
#pragma once

#include <rocksdb/db.h>

#include <chrono>
#include <map>
#include <mutex>
#include <memory>
#include <optional>
#include <vector>

#include "wal/JournalStorage.h"

namespace rayjournal::wal {

class RocksStorage : public JournalStorage {
 public:
  enum class Mode {
    Normal,     // refuse to open on any corruption (salvage reads the files without RocksDB)
    ReadOnly,   // RocksDB read-only open; works beside a running writer only through Secondary
    Secondary,  // follows a live writer without locking it (tools)
  };
  // Throws JournalError naming dir and the cause (locked by another process, corrupt, I/O).
  static std::unique_ptr<RocksStorage> open(const std::string& dir, Mode mode);
  // Throws JournalLockedError (naming the holder) when another process holds dir's lock, and
  // reads nothing else: a journal being written or closed by another process is not read,
  // where it could look damaged. Must not be called by a process that has dir open itself
  // (closing the probe's descriptor would drop that process's own POSIX lock).
  static void throwIfLockedByAnotherProcess(const std::string& dir);
  // True when dir holds a journal to open; false when it is absent or holds no journal data
  // (a new journal may be created there). Throws CorruptionError, changing nothing, when it
  // holds journal files but no CURRENT or MANIFEST to open them by.
  static bool holdsJournal(const std::string& dir);
  ~RocksStorage() override;

  void write(const std::vector<WriteOp>& ops, bool sync) override;
  std::optional<std::string> get(Column column, std::string_view key) override;
  void scan(Column column, std::string_view from, const ScanVisitor& visit) override;
  std::optional<std::string> lastKey(Column column) override;
  std::optional<std::pair<std::string, std::string>> lastEntry(Column column) override;
  void sync() override;
  std::optional<uint64_t> readHighWater() override;
  uint64_t diskBytes() override;
  void compactBefore(Column column, std::string_view key) override;
  void writeHighWater(uint64_t seq) override;
  std::optional<std::string> getSalvaging(Column column, std::string_view key) override;
  std::string describe() const override { return dir_; }
  bool catchUp() override;

  // Moves the memtables into SST files (tests use it to put records on disk in table form).
  void flushToFiles();
  // Checks every block checksum of every file; throws CorruptionError on a mismatch.
  void verifyChecksums();

 private:
  // Where a secondary instance keeps its own info log (one per process).
  static std::string secondaryDir();
  RocksStorage(std::string dir, Mode mode) : dir_(std::move(dir)), mode_(mode) {}
  rocksdb::ColumnFamilyHandle* handle(Column column) const;
  [[noreturn]] void fail(const rocksdb::Status& status, const std::string& what) const;
  bool recovered();  // with writeMu_ held

  std::mutex writeMu_;
  rocksdb::Status failure_;  // the last write or sync error, until Resume() clears it
  std::chrono::steady_clock::time_point lastResume_;

  std::string dir_;
  Mode mode_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  std::optional<std::map<std::string, std::string, std::less<>>> readableRecords_;  // salvage cache
};

}  // namespace rayjournal::wal
