// Encodes records to the value bytes stored under their seq, and back. Layout in FORMAT.md.
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "wal/Record.h"

namespace rayjournal::wal {

// Version 2 adds the back-pointer to the object's previous record; version 1 values (no
// back-pointer) are still read, and written for records whose `previous` is unset.
inline constexpr uint8_t kRecordFormatVersion = 2;

// Guarantees: decode(seq, encode(r)) == r with r.seq = seq. Requires previous < seq when set.
std::string encodeRecord(const Record& record);

// Throws CorruptionError (naming seq) on a checksum mismatch, a truncated value or an
// undecodable body, and JournalError when the record was written by a newer format version.
Record decodeRecord(uint64_t seq, std::string_view value);

// For the object heads: whether the record is a link of an object's chain (format 2, about an
// object), and then its per-object index key, without copying the body. Throws like decodeRecord.
bool decodeChainKey(uint64_t seq, std::string_view value, std::string& indexKey);

// Checks version and checksum only (no body decode): cheap enough to run over a whole tail at
// open. Throws like decodeRecord.
void verifyRecord(uint64_t seq, std::string_view value);

// Fixed-width big-endian keys keep RocksDB's bytewise order equal to numeric order.
std::string encodeSeqKey(uint64_t seq);
uint64_t decodeSeqKey(std::string_view key);

// Per-object index key: indexKey + '\0' + big-endian seq.
std::string encodeObjectIndexKey(std::string_view indexKey, uint64_t seq);
// The prefix shared by every index key of one object.
std::string objectIndexPrefix(std::string_view indexKey);

}  // namespace rayjournal::wal
