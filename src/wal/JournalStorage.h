// The key-value store under the journal: four ordered columns with atomic batch writes.
// Implementations: RocksStorage (the real one, on disk) and MemoryStorage (deterministic
// simulation; can drop unsynced writes as a power loss would).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

namespace rayjournal::wal {

enum class Column : uint8_t { Records = 0, ByObject = 1, Checkpoints = 2, Meta = 3 };
inline constexpr int kColumnCount = 4;
// The layout of the columns (FORMAT.md): 2 since records point back at their object's previous
// record and the by_object index holds only older and salvaged records.
inline constexpr int kJournalFormatVersion = 2;
// RocksDB column family names, by Column.
inline constexpr const char* kColumnNames[kColumnCount] = {"records", "by_object", "checkpoints",
                                                           "meta"};

struct WriteOp {
  enum class Kind : uint8_t { Put, Delete };
  Column column;
  std::string key;
  std::string value;
  Kind kind = Kind::Put;
  // Bytes written after value, not copied into it (a checkpoint's state: tens of MB at 100,000
  // RayJobs). Borrowed: valid until write() returns.
  std::string_view valueTail = {};
};

using ScanVisitor = std::function<bool(std::string_view key, std::string_view value)>;

class JournalStorage {
 public:
  virtual ~JournalStorage() = default;
  // Applies all ops atomically. With sync, returns only once they (and every earlier write)
  // are durable. Throws JournalError on I/O failure (e.g. a full disk); nothing is applied then.
  virtual void write(const std::vector<WriteOp>& ops, bool sync) = 0;
  virtual std::optional<std::string> get(Column column, std::string_view key) = 0;
  // Visits keys >= from in byte order until visit returns false. Throws CorruptionError when the
  // storage itself reports corruption.
  virtual void scan(Column column, std::string_view from, const ScanVisitor& visit) = 0;
  virtual std::optional<std::string> lastKey(Column column) = 0;
  // The last key and its value; one read where the storage can (a checkpoint's value is tens of
  // MB, and finding its key alone reads its block).
  virtual std::optional<std::pair<std::string, std::string>> lastEntry(Column column) {
    auto key = lastKey(column);
    if (!key) return std::nullopt;
    auto value = get(column, *key);
    if (!value) return std::nullopt;
    return std::pair{std::move(*key), std::move(*value)};
  }
  // Like get, but when the normal read path is blocked by an unreadable block elsewhere, looks
  // for the key in whatever can still be read. Used to locate corruption and to salvage.
  virtual std::optional<std::string> getSalvaging(Column column, std::string_view key) {
    return get(column, key);
  }
  // Makes every earlier write durable.
  virtual void sync() = 0;
  // The high-water mark: the newest seq the journal acknowledged as durable, kept outside the
  // storage it protects (a file beside RocksDB's, a separate cell in memory), so that losing the
  // newest write-ahead log cannot take the mark with it. writeHighWater is durable when it
  // returns (one fsync); nullopt when none was ever written.
  virtual std::optional<uint64_t> readHighWater() { return std::nullopt; }
  virtual void writeHighWater(uint64_t /*seq*/) {}
  // Bytes on the volume (0 when not known); reclaims the space of deleted keys below `key`
  // (of the whole column when key is empty).
  virtual uint64_t diskBytes() { return 0; }
  virtual void compactBefore(Column /*column*/, std::string_view /*key*/) {}
  // A reader beside a running writer (RocksDB's secondary instance): takes in what the writer
  // wrote since the open or the last catchUp. False when this storage cannot follow a writer.
  // Blocks for the read of the writer's new log entries.
  virtual bool catchUp() { return false; }
  // Where the data lives, for messages ("/var/lib/rayjournal/journal" or "memory:sim").
  virtual std::string describe() const = 0;
};

}  // namespace rayjournal::wal
