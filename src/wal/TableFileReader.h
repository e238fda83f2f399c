// Reads RocksDB table files (`*.sst`) one by one with rocksdb::SstFileReader, without the
// MANIFEST, for salvage and for locating an unreadable record. A file whose footer or index
// cannot be read is reported and skipped; inside a readable file a bad data block is skipped
// and reading goes on after it (for seq-keyed columns, by seeking past the damage), so every
// intact block is read. Blocking file I/O; no shared state.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace rayjournal::wal {

struct TableFileInfo {
  std::string path;
  uint64_t number = 0;  // RocksDB file number (newer files have larger numbers)
  std::string columnFamily;
  uint32_t columnFamilyId = 0;
};

struct TableReadResult {
  std::vector<TableFileInfo> files;   // every file that opened
  std::vector<std::string> problems;  // "FILE: cause"
};

using TableVisitor = std::function<void(const TableFileInfo&, std::string_view key, std::string_view value)>;

// Visits every readable entry of every table file in dir, in file-number order. Keys of the
// families named in seqKeyed are 8-byte big-endian seqs, which lets the reader seek past a bad
// block instead of losing the rest of the file.
TableReadResult readTableFiles(const std::string& dir, const std::vector<std::string>& seqKeyed,
                               const TableVisitor& visit);

}  // namespace rayjournal::wal
