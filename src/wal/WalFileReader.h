// Reads RocksDB write-ahead log files (`<number>.log`) without opening the database, for
// salvage: a journal whose CURRENT, MANIFEST or table files are damaged still has its newest
// records in the WAL, and RocksDB itself replays a WAL only through an intact MANIFEST.
//
// File format (RocksDB's, inherited from LevelDB's db/log_format.h): 32 KiB blocks of physical
// records, each `masked_crc32c:u32le length:u16le type:u8 [log_number:u32le] payload`; types
// 1-4 are FULL/FIRST/MIDDLE/LAST, 5-8 the same with the log number (recycled files); a block's
// tail shorter than a header is zero padding. The crc covers the type byte, the log number when
// present, and the payload. A logical record is one WriteBatch (`seq:u64le count:u32le
// entries`), decoded with rocksdb::WriteBatch.
//
// A damaged physical record is skipped with the rest of its block (its length cannot be
// trusted) and the reader goes on at the next block, so every intact batch is read. Blocking
// file I/O; no shared state.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace rayjournal::wal {

struct WalEntry {
  uint32_t columnFamilyId = 0;
  bool put = true;  // false: a delete
  std::string_view key;
  std::string_view value;
  size_t offset = 0;  // in the file, of the batch's last fragment
};

struct WalReadResult {
  uint64_t batches = 0;
  std::vector<std::string> problems;  // "FILE offset N: cause"
  std::vector<size_t> problemOffsets;  // N of each problem
};

// Visits every entry of every intact WriteBatch in file order.
WalReadResult readWalFile(const std::string& path, const std::function<void(const WalEntry&)>& visit);

}  // namespace rayjournal::wal
