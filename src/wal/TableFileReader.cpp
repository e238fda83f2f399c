#include "wal/TableFileReader.h"

#include <rocksdb/options.h>
#include <rocksdb/sst_file_reader.h>
#include <rocksdb/table_properties.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "wal/FileNames.h"
#include "wal/RecordCodec.h"

namespace rayjournal::wal {
namespace {

namespace fs = std::filesystem;

// True when a seek to key lands on readable data (or the end of the file).
bool readableFrom(rocksdb::SstFileReader& reader, uint64_t seq) {
  std::unique_ptr<rocksdb::Iterator> it(reader.NewIterator(rocksdb::ReadOptions()));
  it->Seek(encodeSeqKey(seq));
  return it->status().ok();
}

// After a bad block following `last`, the smallest seq from which reading works again: probe
// forward in doubling steps, then bisect back to the first readable seq.
std::optional<uint64_t> resumePoint(rocksdb::SstFileReader& reader, uint64_t last) {
  uint64_t bad = last + 1, step = 1;
  while (!readableFrom(reader, bad + step)) {
    bad += step;
    if (step > (uint64_t(1) << 40)) return std::nullopt;
    step *= 2;
  }
  uint64_t good = bad + step;
  while (good - bad > 1) {
    uint64_t mid = bad + (good - bad) / 2;
    (readableFrom(reader, mid) ? good : bad) = mid;
  }
  return good;
}

void readFile(const TableFileInfo& info, rocksdb::SstFileReader& reader, bool seqKeyed,
              const TableVisitor& visit, std::vector<std::string>& problems) {
  uint64_t from = 0;  // 0: from the start
  while (true) {
    std::unique_ptr<rocksdb::Iterator> it(reader.NewIterator(rocksdb::ReadOptions()));
    if (from) it->Seek(encodeSeqKey(from)); else it->SeekToFirst();
    uint64_t last = from ? from - 1 : 0;
    for (; it->Valid(); it->Next()) {
      std::string_view key(it->key().data(), it->key().size());
      visit(info, key, std::string_view(it->value().data(), it->value().size()));
      if (seqKeyed && key.size() == 8) last = decodeSeqKey(key);
    }
    if (it->status().ok()) return;
    std::string where = last ? " after key seq " + std::to_string(last) : " at its first block";
    problems.push_back(info.path + ": unreadable block" + where + ": " + it->status().ToString());
    if (!seqKeyed) return;
    auto resume = resumePoint(reader, std::max(last, from));  // always beyond `from`
    if (!resume) return;
    from = *resume;
  }
}

}  // namespace

TableReadResult readTableFiles(const std::string& dir, const std::vector<std::string>& seqKeyed,
                               const TableVisitor& visit) {
  TableReadResult result;
  for (const auto& [number, path] : numberedFiles(dir, ".sst")) {
    rocksdb::Options options;
    rocksdb::SstFileReader reader(options);
    rocksdb::Status status = reader.Open(path.string());
    if (!status.ok()) {
      result.problems.push_back(path.string() + ": cannot be read at all: " + status.ToString());
      continue;
    }
    auto properties = reader.GetTableProperties();
    TableFileInfo info{path.string(), number, properties ? properties->column_family_name : "",
                       properties ? static_cast<uint32_t>(properties->column_family_id) : 0};
    result.files.push_back(info);
    bool keyed = std::find(seqKeyed.begin(), seqKeyed.end(), info.columnFamily) != seqKeyed.end();
    readFile(info, reader, keyed, visit, result.problems);
  }
  return result;
}

}  // namespace rayjournal::wal
