// The newest record of every object in the journal (its per-object index key -> seq): where a
// walk back through an object's history starts (each record of format 2 points at the
// previous record of its object, FORMAT.md). Derived from the records, so it is never the only
// copy of anything: kept in memory, saved in meta `object_heads` with every checkpoint, and on
// open rebuilt from that copy plus the records written after it.
// A value type; not thread-safe (the journal guards its copy).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "wal/Record.h"

namespace rayjournal::wal {

class ObjectHeads {
 public:
  // The newest noted seq of the object, 0 when none.
  uint64_t find(const std::string& indexKey) const;
  // Keeps the larger of the noted and the given seq, so noting a record twice, or an older one
  // after a newer, changes nothing.
  void note(const std::string& indexKey, uint64_t seq);
  // Notes a record that is part of a chain (format 2, about an object); ignores the others.
  void note(const Record& record);
  // Forgets the objects whose newest record is below seq (pruned away).
  void dropBefore(uint64_t seq);
  size_t size() const { return seqs_.size(); }
  const std::unordered_map<std::string, uint64_t>& entries() const { return seqs_; }

  // Every record with a seq up to `through` has been noted.
  uint64_t through = 0;

  // through:u64le  count:varint  (key:str seq:varint)*count  crc32:u32le (of what precedes)
  std::string encode() const;
  // nullopt when the bytes are damaged (the caller rebuilds from the records instead).
  static std::optional<ObjectHeads> decode(std::string_view bytes);

 private:
  std::unordered_map<std::string, uint64_t> seqs_;
};

}  // namespace rayjournal::wal
