#include "wal/Salvage.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>

#include "wal/FileNames.h"
#include "wal/HighWaterFile.h"
#include "wal/JournalError.h"
#include "wal/RecordCodec.h"
#include "wal/RocksStorage.h"
#include "wal/TableFileReader.h"
#include "wal/WalFileReader.h"

namespace rayjournal::wal {
namespace {

namespace fs = std::filesystem;
constexpr size_t kWriteBatch = 10000;
constexpr const char* kCompleteMarker = "SALVAGED";

// Everything readable in a damaged journal directory, merged across files. Records and
// checkpoints are written once and only ever deleted below first_seq, so a union of every copy
// found, filtered by the newest first_seq, is the journal's content; meta counters only grow.
struct Gathered {
  std::map<uint64_t, std::string> records;  // values that pass their own checksum
  std::map<uint64_t, std::string> checkpoints;
  uint64_t firstSeq = 0, epoch = 0, corruptValues = 0;
  std::string instanceId;
  LostRanges lost;
  std::optional<uint64_t> highWater;
  std::vector<std::string> problems;
};

uint64_t metaNumber(std::string_view value) { return parseDecimal(value).value_or(0); }

void takeMeta(Gathered& g, std::string_view key, std::string_view value) {
  if (key == "first_seq") g.firstSeq = std::max(g.firstSeq, metaNumber(value));
  if (key == "epoch") g.epoch = std::max(g.epoch, metaNumber(value));
  if (key == "instance_id" && g.instanceId.empty()) g.instanceId = value;
  if (key == "lost_ranges") {
    try {
      g.lost.add(LostRanges::parse(std::string(value)));
    } catch (const JournalError& e) {
      g.problems.push_back(std::string("meta: ") + e.what());
    }
  }
}

void take(Gathered& g, std::string_view family, std::string_view key, std::string_view value) {
  if (family == "meta") return takeMeta(g, key, value);
  if (key.size() != 8) return;
  uint64_t seq = decodeSeqKey(key);
  if (family == "checkpoints" && value.size() >= 8) g.checkpoints.emplace(seq, value);
  if (family != "records" || g.records.count(seq)) return;
  try {
    verifyRecord(seq, value);
    g.records.emplace(seq, value);
  } catch (const JournalError&) {
    g.corruptValues++;  // another copy (an older table, the WAL) may still be intact
  }
}

Gathered gather(const std::string& dir) {
  Gathered g;
  // Column family ids as a journal creates them, unless a table file says otherwise.
  std::map<uint32_t, std::string> families = {
      {1, "records"}, {2, "by_object"}, {3, "checkpoints"}, {4, "meta"}};
  auto tables = readTableFiles(dir, {"records", "checkpoints"},
                               [&](const TableFileInfo& f, std::string_view k, std::string_view v) {
                                 take(g, f.columnFamily, k, v);
                               });
  for (const auto& f : tables.files) families[f.columnFamilyId] = f.columnFamily;
  g.problems = std::move(tables.problems);
  for (const auto& [number, wal] : numberedFiles(dir, ".log")) {
    auto result = readWalFile(wal.string(), [&](const WalEntry& e) {
      auto it = families.find(e.columnFamilyId);
      if (e.put && it != families.end()) take(g, it->second, e.key, e.value);
    });
    g.problems.insert(g.problems.end(), result.problems.begin(), result.problems.end());
  }
  try {
    g.highWater = readHighWaterFile(dir);
  } catch (const JournalError& e) {
    g.problems.push_back(e.what());
  }
  if (g.corruptValues)
    g.problems.push_back(std::to_string(g.corruptValues) + " record values failed their checksum");
  return g;
}

// Decides what the salvaged journal holds: records from first_seq on, the seqs missing up to
// the newest acknowledged one as lost, and the checkpoints that precede the first new loss (a
// later one summarises records that are gone, so replay could never reproduce it).
SalvageReport plan(Gathered& g, const std::string& cause) {
  SalvageReport report;
  report.cause = cause;
  report.problems = g.problems;
  if (!g.firstSeq) {
    g.firstSeq = g.records.empty() ? 1 : g.records.begin()->first;
    report.problems.push_back("meta first_seq unreadable; history taken to start at seq " +
                              std::to_string(g.firstSeq));
  }
  g.records.erase(g.records.begin(), g.records.lower_bound(g.firstSeq));
  g.checkpoints.erase(g.checkpoints.begin(), g.checkpoints.lower_bound(g.firstSeq));
  uint64_t end = std::max({g.firstSeq - 1, g.records.empty() ? 0 : g.records.rbegin()->first,
                           g.highWater.value_or(0), g.lost.lastLost()});
  LostRanges missing;
  uint64_t previous = g.firstSeq - 1;
  for (const auto& [seq, value] : g.records) {
    missing.add(previous + 1, seq - 1);
    previous = seq;
  }
  missing.add(previous + 1, end);
  report.lost = missing.minus(g.lost);
  uint64_t firstLoss = report.lost.empty() ? end + 1 : report.lost.ranges().front().first;
  report.keptThrough = firstLoss - 1;
  for (auto it = g.records.upper_bound(firstLoss); it != g.records.end(); ++it) report.keptAfterGap++;
  for (auto it = g.checkpoints.begin(); it != g.checkpoints.end();) {
    bool trusted = it->first < firstLoss && g.records.count(it->first);
    it = trusted ? std::next(it) : g.checkpoints.erase(it);
  }
  for (const auto& [seq, value] : g.records) {
    if (!g.checkpoints.count(seq) && decodeRecord(seq, value).type == RecordType::Checkpoint)
      report.droppedCheckpoints.add(seq, seq);
  }
  g.lost.add(report.lost);
  g.highWater = end;
  return report;
}

void writeJournal(const std::string& target, const Gathered& g) {
  auto storage = RocksStorage::open(target, RocksStorage::Mode::Normal);
  std::vector<WriteOp> ops = {
      {Column::Meta, "format_version", std::to_string(kJournalFormatVersion)},
      {Column::Meta, "instance_id", g.instanceId.empty() ? randomHex(16) : g.instanceId},
      {Column::Meta, "epoch", std::to_string(g.epoch)},
      {Column::Meta, "first_seq", std::to_string(g.firstSeq)}};
  if (!g.lost.empty()) ops.push_back({Column::Meta, "lost_ranges", g.lost.toString()});
  auto flush = [&](bool force) {
    if (ops.empty() || (!force && ops.size() < kWriteBatch)) return;
    storage->write(ops, false);
    ops.clear();
  };
  for (const auto& [seq, value] : g.records) {
    Record r = decodeRecord(seq, value);
    ops.push_back({Column::Records, encodeSeqKey(seq), value});
    if (!r.object.empty())
      ops.push_back({Column::ByObject, encodeObjectIndexKey(r.object.indexKey(), seq), ""});
    flush(false);
  }
  for (const auto& [seq, value] : g.checkpoints) ops.push_back({Column::Checkpoints, encodeSeqKey(seq), value});
  flush(true);
  storage->sync();
  storage->writeHighWater(g.highWater.value_or(0));
}

std::string parentOf(const std::string& dir) {
  std::string parent = fs::path(dir).parent_path().string();
  return parent.empty() ? "." : parent;
}

}  // namespace

SalvageReport salvageJournalDirectory(const std::string& dir, const std::string& cause) {
  Gathered gathered = gather(dir);
  SalvageReport report = plan(gathered, cause);
  std::string tmp = dir + ".salvage-tmp";
  fs::remove_all(tmp);  // an earlier salvage that stopped before completing
  writeJournal(tmp, gathered);
  {
    std::ofstream marker(tmp + "/" + kCompleteMarker);
    marker << "salvaged from " << dir << "\n";
  }
  syncDirectory(tmp);
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  report.movedTo = dir + ".corrupt-" + std::to_string(seconds);
  for (int n = 1; fs::exists(report.movedTo); ++n)
    report.movedTo = dir + ".corrupt-" + std::to_string(seconds) + "-" + std::to_string(n);
  fs::rename(dir, report.movedTo);
  fs::rename(tmp, dir);
  fs::remove(dir + "/" + kCompleteMarker);
  syncDirectory(parentOf(dir));
  return report;
}

void finishInterruptedSalvage(const std::string& dir) {
  std::string tmp = dir + ".salvage-tmp";
  std::error_code ec;
  if (fs::exists(dir, ec) || !fs::exists(tmp + "/" + kCompleteMarker, ec)) return;
  fs::rename(tmp, dir);
  fs::remove(dir + "/" + kCompleteMarker);
}

}  // namespace rayjournal::wal
