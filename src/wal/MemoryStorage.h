// In-memory JournalStorage for the deterministic simulator and fault-injection tests.
// Keeps a durable image and the unsynced writes on top of it; dropUnsynced() is a power loss.
// Thread-safe (one mutex).
#pragma once

#include <array>
#include <map>
#include <mutex>

#include "wal/JournalStorage.h"

namespace rayjournal::wal {

class MemoryStorage : public JournalStorage {
 public:
  void write(const std::vector<WriteOp>& ops, bool sync) override;
  std::optional<std::string> get(Column column, std::string_view key) override;
  void scan(Column column, std::string_view from, const ScanVisitor& visit) override;
  std::optional<std::string> lastKey(Column column) override;
  void sync() override;
  std::optional<uint64_t> readHighWater() override;
  void writeHighWater(uint64_t seq) override;
  std::string describe() const override { return "memory"; }

  // Power loss: forgets every write not yet made durable, except the first keepBatches of them
  // (a prefix of unsynced writes may have reached the disk before the loss). The process that
  // was writing is dead: every later write, sync or high-water write fails until powerOn().
  void dropUnsynced(size_t keepBatches = 0);
  void powerOn();
  size_t unsyncedBatches() const;
  bool isDurable(Column column, std::string_view key) const;
  // Makes the next `count` writes fail with a JournalError, as a full disk would.
  void failNextWrites(int count);

 private:
  using Table = std::map<std::string, std::string, std::less<>>;
  using Tables = std::array<Table, kColumnCount>;
  static void apply(Tables& tables, const std::vector<WriteOp>& ops);

  mutable std::mutex mu_;
  Tables live_;
  Tables durable_;
  std::vector<std::vector<WriteOp>> unsynced_;
  int failWrites_ = 0;
  std::optional<uint64_t> highWater_;  // durable as soon as written
  bool poweredOff_ = false;
};

}  // namespace rayjournal::wal
