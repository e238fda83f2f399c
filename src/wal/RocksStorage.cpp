#include "wal/RocksStorage.h"

#include <rocksdb/sst_file_reader.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>
#include <rocksdb/write_batch.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "wal/FileNames.h"
#include "wal/HighWaterFile.h"
#include "wal/JournalError.h"
#include "wal/RecordCodec.h"
#include "wal/TableFileReader.h"
#include "wal/WalFileReader.h"

namespace rayjournal::wal {
namespace {

const std::vector<std::string> kFamilies(std::begin(kColumnNames), std::end(kColumnNames));

std::string readOwner(const std::string& dir) {
  std::ifstream in(dir + "/OWNER");
  std::string owner;
  std::getline(in, owner);
  return owner;
}

std::string lockedMessage(const std::string& dir) {
  std::string owner = readOwner(dir);
  return "journal " + dir + " is locked by another process" +
         (owner.empty() ? std::string() : " (" + owner + ")") +
         "; only one operator may use a journal directory at a time";
}

void writeOwner(const std::string& dir) {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::ofstream out(dir + "/OWNER", std::ios::trunc);
  out << "pid " << getpid() << " on " << host << "\n";
}

// RocksDB's info log goes to stderr, never to a LOG file in the journal directory: on a full
// disk that file's writer fails, and RocksDB's next log line asserts on it (an abort), and a
// read-only open must not write there at all. Silent for read-only opens.
class StderrLogger : public rocksdb::Logger {
 public:
  StderrLogger(std::string dir, bool silent)
      : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL), dir_(std::move(dir)), silent_(silent) {}
  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    if (silent_) return;
    char line[1024];
    std::vsnprintf(line, sizeof(line), format, ap);
    std::fprintf(stderr, "rocksdb (journal %s): %s\n", dir_.c_str(), line);
  }

 private:
  std::string dir_;
  bool silent_;
};

// Files that hold journal data. Anything else RocksDB leaves (LOCK, LOG, IDENTITY, OPTIONS-*)
// and our OWNER can be recreated, so a directory holding only those may become a new journal.
bool holdsJournalData(const std::filesystem::path& file) {
  std::string name = file.filename().string();
  if (name == "CURRENT" || name == "HIGHWATER" || name.rfind("MANIFEST-", 0) == 0) return true;
  std::string ext = file.extension().string();
  return ext == ".sst" || ext == ".blob" ||
         fileNumber(file, ".log").has_value();
}

// What a directory is, decided before RocksDB may write anything into it.
enum class DirState { New, Existing };

std::string missingCurrentMessage(const std::string& dir, const std::string& what) {
  return "journal " + dir + " holds journal files but " + what +
         "; refusing to create a new journal over them (the directory was not changed); "
         "--salvage-journal rebuilds a journal from every readable file and keeps the original "
         "beside it";
}

DirState inspectDirectory(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return DirState::New;
  bool data = false;
  for (const auto& entry : fs::directory_iterator(dir, ec)) data = data || holdsJournalData(entry.path());
  if (ec) throw JournalError("journal " + dir + ": cannot list the directory: " + ec.message());
  if (!data) return DirState::New;
  std::ifstream current(dir + "/CURRENT");
  if (!current) throw CorruptionError(0, missingCurrentMessage(dir, "no readable CURRENT file"));
  std::string manifest;
  std::getline(current, manifest);
  if (manifest.rfind("MANIFEST-", 0) != 0 || manifest.find('/') != std::string::npos)
    throw CorruptionError(0, missingCurrentMessage(dir, "its CURRENT file does not name a MANIFEST"));
  if (!fs::exists(dir + "/" + manifest, ec))
    throw CorruptionError(0, missingCurrentMessage(dir, "CURRENT names " + manifest + ", which is missing"));
  return DirState::Existing;
}

// An existing journal must already have every column family: creating one would write a new
// MANIFEST into a directory whose own may be damaged.
void requireColumnFamilies(const std::string& dir, const std::vector<std::string>& wanted) {
  std::vector<std::string> present;
  rocksdb::Status status = rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir, &present);
  if (!status.ok()) {
    std::string cause = "its MANIFEST cannot be read (" + status.ToString() + ")";
    throw CorruptionError(0, missingCurrentMessage(dir, cause));
  }
  for (const auto& name : wanted) {
    if (std::find(present.begin(), present.end(), name) == present.end())
      throw CorruptionError(0, missingCurrentMessage(dir, "it has no '" + name + "' column family"));
  }
}

rocksdb::Options baseOptions(const std::string& dir, RocksStorage::Mode mode, bool create) {
  rocksdb::Options options;
  options.create_if_missing = mode == RocksStorage::Mode::Normal && create;
  options.create_missing_column_families = mode == RocksStorage::Mode::Normal && create;
  options.paranoid_checks = true;
  // A crash may leave a half-written record at the very end of the WAL (it was never
  // acknowledged); anything else that fails its checksum is corruption and stops the open.
  // Acknowledged records lost with a truncated tail are caught by the high-water mark.
  options.wal_recovery_mode = rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  options.max_background_jobs = 2;
  // Bounds what a restart after a crash must replay from RocksDB's own WAL.
  options.max_total_wal_size = 64 << 20;
  options.max_open_files = 512;
  // Memtables of all families together; also bounds RocksDB's WAL preallocation (1.1 x this),
  // which a small volume would otherwise lose to one write-ahead log file.
  options.db_write_buffer_size = 8 << 20;
  options.keep_log_file_num = 4;
  options.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  if (mode == RocksStorage::Mode::Secondary) options.max_open_files = -1;
  options.info_log =
      std::make_shared<StderrLogger>(dir, mode != RocksStorage::Mode::Normal);
  return options;
}

// The journal seqs on either side of a damaged spot of a WAL file ("after seq A, before B").
std::string seqsAround(const std::vector<std::pair<size_t, uint64_t>>& seqs, size_t offset) {
  uint64_t before = 0, after = 0;
  for (const auto& [at, seq] : seqs) {
    if (at < offset) before = std::max(before, seq);
    if (at > offset && (!after || seq < after)) after = seq;
  }
  std::string out = before ? "; intact up to journal seq " + std::to_string(before) : "";
  if (after) out += "; readable again from seq " + std::to_string(after);
  return out;
}

// RocksDB reports a damaged WAL as "checksum mismatch" without naming it: find where, and which
// journal seqs lie around the damage (records are column family 1, keyed by seq).
std::string walDamage(const std::string& dir) {
  std::string found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".log" || !holdsJournalData(entry.path())) continue;
    std::vector<std::pair<size_t, uint64_t>> seqs;
    auto result = readWalFile(entry.path().string(), [&](const WalEntry& e) {
      if (e.put && e.columnFamilyId == 1 && e.key.size() == 8)
        seqs.emplace_back(e.offset, decodeSeqKey(e.key));
    });
    for (size_t i = 0; i < result.problems.size(); ++i) {
      const auto& p = result.problems[i];
      if (p.find("torn final record") != std::string::npos || found.size() >= 2000) continue;
      found += (found.empty() ? " (" : "; ") + p + seqsAround(seqs, result.problemOffsets[i]);
    }
  }
  return found.empty() ? "" : found + ")";
}

// RocksDB may blame the MANIFEST for a table file it cannot read: name the files that fail.
std::string tableDamage(const std::string& dir) {
  std::string found;
  auto result = readTableFiles(dir, {}, [](const TableFileInfo&, std::string_view, std::string_view) {});
  for (const auto& p : result.problems) {
    if (found.size() < 2000) found += (found.empty() ? " (" : "; ") + p;
  }
  return found.empty() ? "" : found + ")";
}

rocksdb::ColumnFamilyOptions columnOptions() {
  rocksdb::ColumnFamilyOptions cf;
  rocksdb::BlockBasedTableOptions table;
  table.checksum = rocksdb::kCRC32c;
  cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  cf.write_buffer_size = 16 << 20;
  return cf;
}

}  // namespace

[[noreturn]] void RocksStorage::fail(const rocksdb::Status& status, const std::string& what) const {
  if (status.IsCorruption())
    throw CorruptionError(0, "journal " + dir_ + ": " + what + ": " + status.ToString());
  if (status.IsNoSpace() || status.ToString().find("No space left") != std::string::npos)
    throw JournalFullError("journal " + dir_ + ": " + what + ": disk full: " + status.ToString());
  throw JournalError("journal " + dir_ + ": " + what + ": " + status.ToString());
}

bool RocksStorage::holdsJournal(const std::string& dir) {
  return inspectDirectory(dir) == DirState::Existing;
}

std::unique_ptr<RocksStorage> RocksStorage::open(const std::string& dir, Mode mode) {
  std::unique_ptr<RocksStorage> storage(new RocksStorage(dir, mode));
  bool create = false;
  if (mode == Mode::Normal) {
    create = inspectDirectory(dir) == DirState::New;
    if (!create) requireColumnFamilies(dir, kFamilies);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw JournalError("journal " + dir + ": cannot create directory: " + ec.message());
  } else if (!std::filesystem::exists(dir + "/CURRENT")) {
    throw JournalError("journal " + dir + ": no journal there (no RocksDB CURRENT file)");
  }
  rocksdb::Options options = baseOptions(dir, mode, create);
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  descriptors.emplace_back(rocksdb::kDefaultColumnFamilyName, columnOptions());
  for (const auto& name : kFamilies) descriptors.emplace_back(name, columnOptions());
  rocksdb::DB* raw = nullptr;
  rocksdb::Status status;
  if (mode == Mode::ReadOnly) {
    status = rocksdb::DB::OpenForReadOnly(options, dir, descriptors, &storage->handles_, &raw);
  } else if (mode == Mode::Secondary) {
    status = rocksdb::DB::OpenAsSecondary(options, dir, secondaryDir(), descriptors, &storage->handles_,
                                          &raw);
  } else {
    status = rocksdb::DB::Open(options, dir, descriptors, &storage->handles_, &raw);
  }
  if (!status.ok()) {
    std::string text = status.ToString();
    if (status.IsIOError() && (text.find("Permission denied") != std::string::npos ||
                               text.find("Read-only file system") != std::string::npos)) {
      throw JournalError("journal " + dir + " cannot be written: " +
                         (text.find("Read-only") != std::string::npos
                              ? std::string("the file system is read-only")
                              : "permission denied for user " + std::to_string(geteuid())) +
                         "; the operator needs to write its journal directory (" + text + ")");
    }
    if (status.IsIOError() && text.find("lock") != std::string::npos) {
      throw JournalLockedError(lockedMessage(dir));
    }
    if (status.IsCorruption()) {
      throw CorruptionError(0, "journal " + dir + " cannot be opened: " + text +
                                   walDamage(dir) + tableDamage(dir) +
                                   "; --salvage-journal rebuilds it from every readable record "
                                   "and keeps the original beside it");
    }
    if (status.IsNoSpace() || text.find("No space left") != std::string::npos)
      throw JournalFullError("journal " + dir + " cannot be opened: disk full: " + text);
    throw JournalError("journal " + dir + " cannot be opened: " + text);
  }
  storage->db_.reset(raw);
  if (mode == Mode::Normal) writeOwner(dir);
  return storage;
}

RocksStorage::~RocksStorage() {
  if (!db_) return;
  if (mode_ == Mode::Normal && recovered()) {
    // A clean close leaves nothing in the WAL to replay, so the next open is fast.
    rocksdb::FlushOptions flush;
    flush.wait = true;
    for (size_t i = 1; i < handles_.size(); ++i) db_->Flush(flush, handles_[i]);
  }
  for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
  db_->Close();
  db_.reset();
  std::error_code ignored;  // a follower's own info files, of no use once it is gone
  if (mode_ == Mode::Secondary) std::filesystem::remove_all(secondaryDir(), ignored);
}

std::string RocksStorage::secondaryDir() {
  return std::filesystem::temp_directory_path() /
         ("rayjournal-secondary-" + std::to_string(getpid()));
}

bool RocksStorage::catchUp() {
  if (mode_ != Mode::Secondary) return false;
  rocksdb::Status status = db_->TryCatchUpWithPrimary();
  if (!status.ok())
    throw JournalError("journal " + dir_ + ": following the writer failed: " + status.ToString());
  return true;
}

rocksdb::ColumnFamilyHandle* RocksStorage::handle(Column column) const {
  return handles_[static_cast<int>(column) + 1];  // 0 is RocksDB's default family
}

void RocksStorage::write(const std::vector<WriteOp>& ops, bool sync) {
  // Sized once: a batch grown by doubling held up to twice a checkpoint's bytes at the peak.
  // Per entry: a tag, the column and two lengths as varints (at most 1 + 5 + 5 + 5 bytes).
  size_t reserve = 12;  // the batch header: sequence and count
  for (const auto& op : ops) reserve += 16 + op.key.size() + op.value.size() + op.valueTail.size();
  rocksdb::WriteBatch batch(reserve);
  for (const auto& op : ops) {
    if (op.kind == WriteOp::Kind::Put && op.valueTail.empty()) {
      batch.Put(handle(op.column), op.key, op.value);
    } else if (op.kind == WriteOp::Kind::Put) {
      const rocksdb::Slice key(op.key);
      const rocksdb::Slice value[2] = {op.value, {op.valueTail.data(), op.valueTail.size()}};
      batch.Put(handle(op.column), rocksdb::SliceParts(&key, 1), rocksdb::SliceParts(value, 2));
    } else {
      batch.Delete(handle(op.column), op.key);
    }
  }
  rocksdb::WriteOptions options;
  options.sync = sync;
  std::lock_guard lock(writeMu_);
  if (!recovered()) fail(failure_, "write refused until the earlier write error clears");
  rocksdb::Status status = db_->Write(options, &batch);
  if (!status.ok()) {
    failure_ = status;
    fail(status, "write failed");
  }
}

// After a failed write RocksDB's WAL writer must not be touched again (its debug build asserts
// on any append or sync to a writer that saw an error) until Resume() has switched to a new
// WAL: every write and sync first brings the database back, or fails without calling in.
bool RocksStorage::recovered() {
  if (failure_.ok()) return true;
  // Each attempt flushes memtables; bound how often a busy operator retries that.
  auto now = std::chrono::steady_clock::now();
  if (now - lastResume_ < std::chrono::milliseconds(500)) return false;
  lastResume_ = now;
  rocksdb::Status resumed = db_->Resume();
  if (!resumed.ok()) return false;
  failure_ = rocksdb::Status::OK();
  return true;
}

std::optional<std::string> RocksStorage::get(Column column, std::string_view key) {
  std::string value;
  rocksdb::Status status = db_->Get(rocksdb::ReadOptions(), handle(column),
                                    rocksdb::Slice(key.data(), key.size()), &value);
  if (status.IsNotFound()) return std::nullopt;
  if (!status.ok()) fail(status, "read failed");
  return value;
}

void RocksStorage::scan(Column column, std::string_view from, const ScanVisitor& visit) {
  rocksdb::ReadOptions options;
  options.verify_checksums = true;
  options.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(options, handle(column)));
  for (it->Seek(rocksdb::Slice(from.data(), from.size())); it->Valid(); it->Next()) {
    if (!visit(std::string_view(it->key().data(), it->key().size()),
               std::string_view(it->value().data(), it->value().size()))) {
      return;
    }
  }
  if (!it->status().ok()) fail(it->status(), "scan failed");
}

std::optional<std::string> RocksStorage::lastKey(Column column) {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handle(column)));
  it->SeekToLast();
  if (!it->status().ok()) fail(it->status(), "seek failed");
  if (!it->Valid()) return std::nullopt;
  return it->key().ToString();
}

std::optional<std::pair<std::string, std::string>> RocksStorage::lastEntry(Column column) {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handle(column)));
  it->SeekToLast();
  if (!it->status().ok()) fail(it->status(), "seek failed");
  if (!it->Valid()) return std::nullopt;
  std::pair<std::string, std::string> entry{it->key().ToString(), it->value().ToString()};
  if (!it->status().ok()) fail(it->status(), "read failed");
  return entry;
}

uint64_t RocksStorage::diskBytes() {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    if (entry.is_regular_file(ec)) total += entry.file_size(ec);
  }
  return total;
}

void RocksStorage::compactBefore(Column column, std::string_view key) {
  std::lock_guard lock(writeMu_);
  if (!failure_.ok()) return;  // a failed database is not compacted until it resumes
  rocksdb::Slice end(key.data(), key.size());
  rocksdb::CompactRangeOptions options;
  rocksdb::Status status =
      db_->CompactRange(options, handle(column), nullptr, key.empty() ? nullptr : &end);
  if (!status.ok()) fail(status, "compaction failed");
}

std::optional<uint64_t> RocksStorage::readHighWater() { return readHighWaterFile(dir_); }

void RocksStorage::writeHighWater(uint64_t seq) { writeHighWaterFile(dir_, seq); }

void RocksStorage::sync() {
  std::lock_guard lock(writeMu_);
  if (!recovered()) fail(failure_, "sync refused until the earlier write error clears");
  rocksdb::Status status = db_->SyncWAL();
  if (!status.ok()) {
    failure_ = status;
    fail(status, "sync failed");
  }
}

std::optional<std::string> RocksStorage::getSalvaging(Column column, std::string_view key) {
  try {
    return get(column, key);
  } catch (const CorruptionError&) {
    if (column != Column::Records) throw;
    if (!readableRecords_) {
      readableRecords_.emplace();
      readTableFiles(dir_, {"records"},
                     [&](const TableFileInfo& f, std::string_view k, std::string_view v) {
                       if (f.columnFamily == "records") readableRecords_->emplace(k, v);
                     });
    }
    auto it = readableRecords_->find(key);
    if (it == readableRecords_->end()) throw;
    return it->second;
  }
}

void RocksStorage::flushToFiles() {
  rocksdb::FlushOptions options;
  options.wait = true;
  for (size_t i = 1; i < handles_.size(); ++i) {
    rocksdb::Status status = db_->Flush(options, handles_[i]);
    if (!status.ok()) fail(status, "flush failed");
  }
}

void RocksStorage::verifyChecksums() {
  rocksdb::Status status = db_->VerifyChecksum();
  if (!status.ok()) fail(status, "checksum verification failed");
}

// RocksDB locks <dir>/LOCK with a POSIX record lock (fcntl F_SETLK) over the whole file. An
// open-file-description lock query sees it from any other process, and takes no lock itself.
void RocksStorage::throwIfLockedByAnotherProcess(const std::string& dir) {
  int fd = ::open((dir + "/LOCK").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;  // no journal yet, or nothing to hold
  struct flock probe {};
  probe.l_type = F_WRLCK;
  probe.l_whence = SEEK_SET;
  bool held = ::fcntl(fd, F_OFD_GETLK, &probe) == 0 && probe.l_type != F_UNLCK;
  ::close(fd);
  if (held) throw JournalLockedError(lockedMessage(dir));
}

}  // namespace rayjournal::wal
