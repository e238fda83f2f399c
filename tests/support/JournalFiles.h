// Helpers for tests that damage a journal's files on purpose.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>

#include "wal/MemoryStorage.h"
#include "wal/Record.h"
#include "wal/RecordCodec.h"

namespace rayjournal::testing {

inline wal::Record observation(int i) {
  wal::Record r;
  r.type = wal::RecordType::Observation;
  r.object = {"RayJob", "default", "job-" + std::to_string(i % 7), "u"};
  r.body = "RUNNING " + std::to_string(i) + " " + std::string(200, 'p');
  return r;
}

// Flips one bit of the stored value of record `seq`, so that its checksum fails.
inline void damageStoredRecord(wal::MemoryStorage& storage, uint64_t seq) {
  std::string value = *storage.get(wal::Column::Records, wal::encodeSeqKey(seq));
  value[value.size() - 2] ^= 1;
  storage.write({{wal::Column::Records, wal::encodeSeqKey(seq), value}}, true);
}

inline std::set<std::string> filesWithSuffix(const std::string& dir, const std::string& suffix) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string p = e.path().string();
    if (p.size() >= suffix.size() &&
        p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.insert(p);
  }
  return out;
}

inline std::string largest(const std::set<std::string>& files) {
  if (files.empty()) return "";
  return *std::max_element(files.begin(), files.end(), [](const auto& a, const auto& b) {
    return std::filesystem::file_size(a) < std::filesystem::file_size(b);
  });
}

inline void flipBytes(const std::string& file, size_t offset, int count) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  for (int i = 0; i < count; ++i) {
    f.seekg(offset + i);
    char c;
    f.get(c);
    f.seekp(offset + i);
    f.put(static_cast<char>(c ^ 0x5a));
  }
}

// The table files whose bytes contain `marker` (uncompressed small tables: the meta family's
// keys, a checkpoint's text), to damage one column family's table and not another's.
inline std::set<std::string> tablesHolding(const std::string& dir, const std::string& marker) {
  std::set<std::string> out;
  for (const auto& sst : filesWithSuffix(dir, ".sst")) {
    std::ifstream in(sst, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.find(marker) != std::string::npos) out.insert(sst);
  }
  return out;
}

// Every file's name and bytes, to show a directory was left exactly as it was.
inline std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    out[e.path().filename().string()] =
        std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return out;
}

}  // namespace rayjournal::testing
