#include "wal/MemoryStorage.h"

#include "wal/JournalError.h"

namespace rayjournal::wal {

void MemoryStorage::apply(Tables& tables, const std::vector<WriteOp>& ops) {
  for (const auto& op : ops) {
    auto& table = tables[static_cast<int>(op.column)];
    if (op.kind == WriteOp::Kind::Put) {
      table.insert_or_assign(op.key, op.value + std::string(op.valueTail));
    } else {
      table.erase(op.key);
    }
  }
}

void MemoryStorage::write(const std::vector<WriteOp>& ops, bool sync) {
  std::lock_guard lock(mu_);
  if (poweredOff_) throw JournalError("journal memory: write after a power loss");
  if (failWrites_ > 0) {
    --failWrites_;
    throw JournalError("journal memory: write failed: no space left on device (injected)");
  }
  apply(live_, ops);
  // Kept past this call (a power loss drops them): borrowed tails become owned bytes.
  std::vector<WriteOp> owned = ops;
  for (auto& op : owned) {
    op.value.append(op.valueTail);
    op.valueTail = {};
  }
  unsynced_.push_back(std::move(owned));
  if (sync) {
    for (const auto& batch : unsynced_) apply(durable_, batch);
    unsynced_.clear();
  }
}

std::optional<std::string> MemoryStorage::get(Column column, std::string_view key) {
  std::lock_guard lock(mu_);
  const auto& table = live_[static_cast<int>(column)];
  auto it = table.find(key);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

void MemoryStorage::scan(Column column, std::string_view from, const ScanVisitor& visit) {
  // Copy-free iteration would hold the lock across the visitor; the visitor may call back into
  // the journal, so iterate by key lookups instead.
  std::string cursor(from);
  bool first = true;
  while (true) {
    std::string key, value;
    {
      std::lock_guard lock(mu_);
      const auto& table = live_[static_cast<int>(column)];
      auto it = first ? table.lower_bound(cursor) : table.upper_bound(cursor);
      if (it == table.end()) return;
      key = it->first;
      value = it->second;
    }
    first = false;
    cursor = key;
    if (!visit(key, value)) return;
  }
}

std::optional<std::string> MemoryStorage::lastKey(Column column) {
  std::lock_guard lock(mu_);
  const auto& table = live_[static_cast<int>(column)];
  if (table.empty()) return std::nullopt;
  return table.rbegin()->first;
}

void MemoryStorage::sync() {
  std::lock_guard lock(mu_);
  if (poweredOff_) throw JournalError("journal memory: sync after a power loss");
  for (const auto& batch : unsynced_) apply(durable_, batch);
  unsynced_.clear();
}

void MemoryStorage::dropUnsynced(size_t keepBatches) {
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < keepBatches && i < unsynced_.size(); ++i) apply(durable_, unsynced_[i]);
  unsynced_.clear();
  live_ = durable_;
  poweredOff_ = true;
}

void MemoryStorage::powerOn() {
  std::lock_guard lock(mu_);
  poweredOff_ = false;
}

size_t MemoryStorage::unsyncedBatches() const {
  std::lock_guard lock(mu_);
  return unsynced_.size();
}

bool MemoryStorage::isDurable(Column column, std::string_view key) const {
  std::lock_guard lock(mu_);
  const auto& table = durable_[static_cast<int>(column)];
  return table.find(key) != table.end();
}

void MemoryStorage::failNextWrites(int count) {
  std::lock_guard lock(mu_);
  failWrites_ = count;
}

std::optional<uint64_t> MemoryStorage::readHighWater() {
  std::lock_guard lock(mu_);
  return highWater_;
}

void MemoryStorage::writeHighWater(uint64_t seq) {
  std::lock_guard lock(mu_);
  if (poweredOff_) throw JournalError("journal memory: high-water write after a power loss");
  highWater_ = seq;
}

}  // namespace rayjournal::wal
