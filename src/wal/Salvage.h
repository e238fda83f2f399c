// Salvage: rebuilds a consistent journal from whatever can still be read of a damaged one,
// without ever writing to the original. Reads every table file (rocksdb::SstFileReader, past bad
// blocks), every write-ahead log file (WalFileReader, past bad records) and HIGHWATER, with no
// need for CURRENT, the MANIFEST or any single file to be intact; writes the readable records in
// seq order into a fresh journal beside the original, with the per-object index rebuilt, the
// seqs it could not find recorded as lost (meta `lost_ranges`), and only the checkpoints that
// precede the first loss; then moves the original to DIR.corrupt-<unix seconds> and the new
// journal into DIR. Blocking; the caller must hold no storage open on dir.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wal/LostRanges.h"

namespace rayjournal::wal {

struct SalvageReport {
  uint64_t keptThrough = 0;   // every seq up to here is kept (or was lost before this salvage)
  LostRanges lost;            // seqs this salvage could not find
  uint64_t keptAfterGap = 0;  // readable records kept after the first lost seq
  // Checkpoint records whose stored state salvage dropped (unreadable, or summarising records
  // that are gone): history is intact, only the shortcut for replay is missing.
  LostRanges droppedCheckpoints;
  std::string cause;          // why the journal could not be opened
  std::string movedTo;        // where the original now is
  std::vector<std::string> problems;  // per file: what could not be read
};

SalvageReport salvageJournalDirectory(const std::string& dir, const std::string& cause);

// A salvage interrupted between moving the original aside and moving the new journal in leaves
// DIR absent and a complete DIR.salvage-tmp: finishes the move. Safe to call on any dir.
void finishInterruptedSalvage(const std::string& dir);

}  // namespace rayjournal::wal
