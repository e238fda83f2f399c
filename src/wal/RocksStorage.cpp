#include "wal/RocksStorage.h"

#include <rocksdb/sst_file_reader.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "wal/JournalError.h"

namespace rayjournal::wal {
namespace {

const std::vector<std::string> kColumnNames = {"records", "by_object", "checkpoints", "meta"};

std::string readOwner(const std::string& dir) {
  std::ifstream in(dir + "/OWNER");
  std::string owner;
  std::getline(in, owner);
  return owner;
}

void writeOwner(const std::string& dir) {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::ofstream out(dir + "/OWNER", std::ios::trunc);
  out << "pid " << getpid() << " on " << host << "\n";
}

rocksdb::Options baseOptions(RocksStorage::Mode mode) {
  rocksdb::Options options;
  options.create_if_missing = mode == RocksStorage::Mode::Normal;
  options.create_missing_column_families = mode == RocksStorage::Mode::Normal;
  options.paranoid_checks = mode != RocksStorage::Mode::Salvage;
  // A crash may leave a half-written record at the very end of the WAL (it was never
  // acknowledged); anything else that fails its checksum is corruption and stops the open.
  options.wal_recovery_mode = mode == RocksStorage::Mode::Salvage
                                  ? rocksdb::WALRecoveryMode::kPointInTimeRecovery
                                  : rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  options.max_background_jobs = 2;
  // Bounds what a restart after a crash must replay from RocksDB's own WAL.
  options.max_total_wal_size = 64 << 20;
  options.max_open_files = 512;
  options.keep_log_file_num = 4;
  options.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  if (mode == RocksStorage::Mode::Secondary) options.max_open_files = -1;
  return options;
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
  if (status.IsNoSpace())
    throw JournalError("journal " + dir_ + ": " + what + ": disk full: " + status.ToString());
  throw JournalError("journal " + dir_ + ": " + what + ": " + status.ToString());
}

std::unique_ptr<RocksStorage> RocksStorage::open(const std::string& dir, Mode mode) {
  std::unique_ptr<RocksStorage> storage(new RocksStorage(dir, mode));
  if (mode == Mode::Normal) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw JournalError("journal " + dir + ": cannot create directory: " + ec.message());
  } else if (!std::filesystem::exists(dir + "/CURRENT")) {
    throw JournalError("journal " + dir + ": no journal there (no RocksDB CURRENT file)");
  }
  rocksdb::Options options = baseOptions(mode);
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  descriptors.emplace_back(rocksdb::kDefaultColumnFamilyName, columnOptions());
  for (const auto& name : kColumnNames) descriptors.emplace_back(name, columnOptions());
  rocksdb::DB* raw = nullptr;
  rocksdb::Status status;
  if (mode == Mode::Salvage) {
    status = rocksdb::DB::Open(options, dir, descriptors, &storage->handles_, &raw);
    if (!status.ok()) {
      // The manifest or a table file is unreadable: rebuild the manifest from what is intact.
      rocksdb::Status repaired = rocksdb::RepairDB(dir, options, descriptors);
      if (!repaired.ok()) storage->fail(repaired, "repair failed");
      storage->handles_.clear();
      status = rocksdb::DB::Open(options, dir, descriptors, &storage->handles_, &raw);
    }
  } else if (mode == Mode::ReadOnly) {
    status = rocksdb::DB::OpenForReadOnly(options, dir, descriptors, &storage->handles_, &raw);
  } else if (mode == Mode::Secondary) {
    std::string secondary = std::filesystem::temp_directory_path() /
                            ("rayjournal-secondary-" + std::to_string(getpid()));
    status = rocksdb::DB::OpenAsSecondary(options, dir, secondary, descriptors, &storage->handles_,
                                          &raw);
  } else {
    status = rocksdb::DB::Open(options, dir, descriptors, &storage->handles_, &raw);
  }
  if (!status.ok()) {
    std::string text = status.ToString();
    if (status.IsIOError() && text.find("lock") != std::string::npos) {
      std::string owner = readOwner(dir);
      throw JournalError("journal " + dir + " is locked by another process" +
                         (owner.empty() ? std::string() : " (" + owner + ")") +
                         "; only one operator may use a journal directory at a time");
    }
    if (status.IsCorruption()) {
      throw CorruptionError(0, "journal " + dir + " cannot be opened: " + text +
                                   "; run with --salvage-journal to keep the readable prefix");
    }
    throw JournalError("journal " + dir + " cannot be opened: " + text);
  }
  storage->db_.reset(raw);
  if (mode == Mode::Normal || mode == Mode::Salvage) writeOwner(dir);
  return storage;
}

RocksStorage::~RocksStorage() {
  if (!db_) return;
  if (mode_ == Mode::Normal) {
    // A clean close leaves nothing in the WAL to replay, so the next open is fast.
    rocksdb::FlushOptions flush;
    flush.wait = true;
    for (size_t i = 1; i < handles_.size(); ++i) db_->Flush(flush, handles_[i]);
  }
  for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
  db_->Close();
}

rocksdb::ColumnFamilyHandle* RocksStorage::handle(Column column) const {
  return handles_[static_cast<int>(column) + 1];  // 0 is RocksDB's default family
}

void RocksStorage::write(const std::vector<WriteOp>& ops, bool sync) {
  rocksdb::WriteBatch batch;
  for (const auto& op : ops) {
    if (op.kind == WriteOp::Kind::Put) {
      batch.Put(handle(op.column), op.key, op.value);
    } else {
      batch.Delete(handle(op.column), op.key);
    }
  }
  rocksdb::WriteOptions options;
  options.sync = sync;
  rocksdb::Status status = db_->Write(options, &batch);
  if (!status.ok()) fail(status, "write failed");
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

void RocksStorage::sync() {
  rocksdb::Status status = db_->SyncWAL();
  if (!status.ok()) fail(status, "sync failed");
}

std::optional<std::string> RocksStorage::getSalvaging(Column column, std::string_view key) {
  try {
    return get(column, key);
  } catch (const CorruptionError&) {
    if (column != Column::Records) throw;
    if (!readableRecords_) {
      readableRecords_.emplace();
      scanReadableTableEntries(dir_, column, [&](std::string_view k, std::string_view v) {
        readableRecords_->emplace(k, v);
        return true;
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

}  // namespace rayjournal::wal

namespace rayjournal::wal {

void RocksStorage::scanReadableTableEntries(const std::string& dir, Column column,
                                            const ScanVisitor& visit) {
  const std::string& wanted = kColumnNames[static_cast<int>(column)];
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".sst") continue;
    rocksdb::Options options;
    rocksdb::SstFileReader reader(options);
    if (!reader.Open(entry.path().string()).ok()) continue;
    auto properties = reader.GetTableProperties();
    if (!properties || properties->column_family_name != wanted) continue;
    rocksdb::ReadOptions read;
    read.verify_checksums = true;
    std::unique_ptr<rocksdb::Iterator> it(reader.NewIterator(read));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      if (!visit(std::string_view(it->key().data(), it->key().size()),
                 std::string_view(it->value().data(), it->value().size()))) {
        break;
      }
    }
  }
}

}  // namespace rayjournal::wal
