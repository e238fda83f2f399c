// The write-ahead journal: an append-only, gap-free sequence of records with a per-object
// index, checkpoints and retention. See FORMAT.md for the layout.
//
// Thread safety: every public method is thread-safe. Appends from many threads are grouped
// into one storage write (group commit, LevelDB-style leader/followers); a synced append
// blocks until its own record is durable, and never longer than the group it joined.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "wal/JournalStorage.h"
#include "wal/LostRanges.h"
#include "wal/ObjectHeads.h"
#include "wal/Record.h"
#include "wal/Salvage.h"

namespace rayjournal::wal {

enum class Durability {
  Sync,  // acknowledged once on disk
  Lazy,  // acknowledged once written; made durable by the next sync write or the periodic flush
};

struct CheckpointMarker {
  uint64_t coversThrough = 0;
  uint64_t bytes = 0;  // of the state
  uint32_t crc32 = 0;  // of the state
};

// The journal carries record bodies as bytes it does not interpret; the bodies of the two
// records it writes itself come from the body schema above it (events::journalOptions sets
// both). Unset: those records have an empty body.
struct JournalBodies {
  std::function<std::string(const CheckpointMarker&)> checkpoint;
  std::function<std::string(const SalvageReport&)> salvaged;  // a JournalSalvaged observation
};

struct JournalOptions {
  bool salvage = false;   // on corruption keep the readable prefix instead of refusing to open
  bool readOnly = false;  // inspect a journal (tools); no epoch bump, no appends
  bool follow = false;    // with readOnly: open beside a running operator (RocksDB secondary)
  // With readOnly: throw on every damage a writable open refuses (a lost acknowledged tail, an
  // unreadable record to replay) instead of reporting it. A writable open of a directory runs
  // this check first, so that a refused journal is left exactly as it was.
  bool strict = false;
  bool tailVerified = false;  // internal: the strict pass already checked the tail
  // With strict: check every record, not only those a restart replays (salvage does, so that
  // damaged old history is repaired too).
  bool checkAll = false;
  std::function<int64_t()> nowMs;  // wall clock for record times; system clock when empty
  std::chrono::milliseconds lazyFlushInterval{100};  // 0 disables the background flusher
  // How often the flusher advances the high-water mark (one fsync of a small file each time;
  // checkpoints and a clean close advance it too).
  std::chrono::milliseconds highWaterInterval{1000};
  size_t maxGroupBytes = 4 << 20;
  bool syncAsLazy = false;  // benchmarks only: acknowledge Sync appends without syncing
  JournalBodies bodies;
};

struct CheckpointData {
  uint64_t seq = 0;            // seq of the Checkpoint record
  uint64_t coversThrough = 0;  // state includes every record with seq <= coversThrough
  std::string state;
};

struct JournalStats {
  uint64_t appends = 0;  // records appended
  uint64_t writes = 0;   // storage writes (groups)
  uint64_t syncs = 0;    // synced storage writes plus explicit syncs
  uint64_t bytes = 0;    // encoded record bytes appended
  uint64_t failedWrites = 0;  // storage writes that failed (nothing of them was journaled)
  uint64_t prunedRecords = 0;
  uint64_t scrubbedRecords = 0;
  uint64_t scrubCorrupt = 0;  // records the scrubber found unreadable (each counted once a pass)
};

using RecordVisitor = std::function<bool(const Record&)>;

class Journal {
 public:
  // Opens (creating if absent) the journal in dir, checks the format version and bumps the
  // epoch durably. Throws JournalError / CorruptionError naming dir and cause; with
  // options.salvage, a corrupt journal is rewritten to its good prefix (original kept beside it).
  static std::unique_ptr<Journal> open(const std::string& dir, JournalOptions options = {});
  // Same, on a storage the caller owns (the simulator's MemoryStorage).
  static std::unique_ptr<Journal> open(std::shared_ptr<JournalStorage> storage,
                                       JournalOptions options = {});
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Assigns seq (and time and epoch when unset) and writes. Blocks per Durability.
  // Throws JournalError if the storage write fails; then no seq is consumed.
  uint64_t append(Record record, Durability durability);
  // All records in one atomic write with consecutive seqs; returns the first seq.
  uint64_t appendBatch(std::vector<Record> records, Durability durability);
  // Makes every appended record durable.
  void sync();

  std::optional<Record> get(uint64_t seq);
  // Visits records with seq >= from in order until visit returns false. Throws CorruptionError
  // naming the first bad seq, including a gap in the sequence.
  void scan(uint64_t from, const RecordVisitor& visit);
  // One object's records (by kind/namespace/name) with seq >= from, in order: a walk back from
  // the object's newest record, merged with the by_object index (records of format 1 and of a
  // salvage). Holds only seqs, never the records, so its memory is 8 bytes per record visited.
  void scanObject(const ObjectRef& object, uint64_t from, const RecordVisitor& visit);

  // Checks the ways to an object's records against the records: every index entry points at a
  // record of that object, every record of format 1 is indexed, every back-pointer names the
  // previous record of the same object, and the newest record of every object is its head.
  // Returns one line per problem
  // (at most maxProblems) naming the seq and object; empty when sound. Reads everything.
  std::vector<std::string> checkIndex(size_t maxProblems = 100);
  // Rewrites the by_object index from the records (what `rayjournal-replay reindex` runs):
  // entries for records of format 1 and for every record of an object whose chain is broken,
  // and the object heads. Returns the number of entries written. Writable journals only.
  uint64_t rebuildIndex();

  // Stores state as the projection through coversThrough, with a Checkpoint record (synced).
  uint64_t writeCheckpoint(uint64_t coversThrough, const std::string& state);
  // The newest checkpoint. The first call after a writable open returns the one the open's
  // strict pass read and checked (a checkpoint state is tens of MB: read once per restart).
  std::optional<CheckpointData> latestCheckpoint();
  std::optional<CheckpointData> checkpointAt(uint64_t seq);
  std::vector<uint64_t> checkpointSeqs();

  // Deletes records (and their index entries, and older checkpoints) with seq < beforeSeq.
  // Requires a checkpoint covering beforeSeq - 1, so that state is never lost; throws otherwise.
  void prune(uint64_t beforeSeq);

  // Re-reads up to maxRecords records from `from` on, checking every checksum and that no seq
  // is missing, so that damage to old history is found before someone needs it. Returns the
  // seq to continue from (past the end: start again at firstSeq) and what it found.
  struct ScrubResult {
    uint64_t next = 0;
    std::vector<std::string> corrupt;  // "seq N: cause"
  };
  ScrubResult scrub(uint64_t from, uint64_t maxRecords);

  // The lowest seq whose record was written at or after timeMs (latestSeq + 1 when none);
  // a binary search over record times, which only grow.
  uint64_t firstSeqAtOrAfter(int64_t timeMs);
  // Bytes the journal occupies on its volume (RocksDB's files), for retention and metrics.
  uint64_t diskBytes() { return storage_->diskBytes(); }

  // Called for every record once it is written, in seq order, on the appending thread with the
  // journal's append lock held: keep it short and do not append from it. Set before appending.
  void setAppendListener(std::function<void(const Record&)> listener) {
    listener_ = std::move(listener);
  }

  uint64_t latestSeq() const { return lastSeq_.load(); }
  // A journal opened with readOnly and follow: takes in the records the writer appended since
  // (a tail -f of the journal) and returns the new latest seq; scan then reaches them. Any other
  // journal: latestSeq(). Throws JournalError when the storage cannot catch up.
  uint64_t refresh();
  uint64_t firstSeq() const { return firstSeq_.load(); }
  uint64_t epoch() const { return epoch_; }
  std::string instanceId() const { return instanceId_; }
  const std::optional<SalvageReport>& salvaged() const { return salvaged_; }
  // Seqs a salvage found missing; the sequence is gap-free outside them.
  const LostRanges& lostRanges() const { return lost_; }
  // Read-only opens only: acknowledged seqs beyond the journal's end (the high-water mark says
  // they were durable; a writable open refuses such a journal).
  const LostRanges& missingAcknowledged() const { return missingAcknowledged_; }
  JournalStats stats() const;
  // Why the journal cannot be written now (the last storage write failed, e.g. a full disk),
  // and since when (steady-clock ms); nullopt once a write succeeds again. While set, nothing
  // new is journaled, so no new side effect executes: callers keep retrying and the storage
  // resumes by itself when it can.
  struct Unwritable {
    std::string cause;
    bool diskFull = false;
    int64_t sinceMs = 0;
  };
  std::optional<Unwritable> unwritable() const;
  std::string describe() const { return storage_->describe(); }
  JournalStorage& storage() { return *storage_; }

 private:
  struct Writer;
  Journal(std::shared_ptr<JournalStorage> storage, JournalOptions options);
  void initialize();
  void verifyTail(uint64_t from);
  void checkHighWater();
  void advanceHighWater();
  // Throws CorruptionError unless every seq in [expected, present) is a lost one.
  void requireLost(uint64_t expected, uint64_t present, const std::string& what) const;
  void appendSalvageRecord();
  void fillAndCollect(Writer& writer, std::vector<WriteOp>& ops, uint64_t& bytes,
                      const ObjectHeads& group);
  // Sets record.previous from the group's own records, else from heads_; notes it in group.
  void linkToPrevious(Record& record, ObjectHeads& group);
  // heads_ from meta `object_heads`, what verifyTail noted and the records after both;
  // headsMu_ held.
  void loadHeads();
  // Notes every record after heads.through (damaged ones skipped: verify reports them).
  void catchUpHeads(ObjectHeads& heads);
  // The newest seq of the object (loading or catching up heads_ for a read-only journal).
  uint64_t newestOf(const std::string& indexKey);
  std::vector<uint64_t> indexedSeqs(const std::string& indexKey, uint64_t from);
  std::vector<uint64_t> chainSeqs(const std::string& indexKey, uint64_t from);
  void pruneIndexBefore(uint64_t beforeSeq);
  // What one pass over the records finds of the chains: per object its newest record of format
  // 2, and the seq from which its back-pointers lead to the newest (records below it are found
  // only through the index: a lost record, or damage). problem() gets one line per bad pointer.
  struct ChainFacts {
    std::unordered_map<std::string, uint64_t> newest;
    std::unordered_map<std::string, uint64_t> linkedFrom;
    uint64_t through = 0;  // the last seq when the pass began
    bool needsIndex(const Record& record) const;
  };
  ChainFacts followChains(const std::function<void(std::string)>& problem);
  void checkHeads(const ChainFacts& facts, const std::function<void(std::string)>& problem);
  void rewriteHeads(const ChainFacts& facts);
  void runGroup(std::unique_lock<std::mutex>& lock);
  uint64_t submit(std::vector<Record>& records, bool sync);
  uint64_t submit(Writer& writer);
  void flusherLoop();
  void noteWriteResult(const std::exception_ptr& error);
  std::exception_ptr ownCopy(const std::exception_ptr& error) const;
  int64_t now() const;

  std::shared_ptr<JournalStorage> storage_;
  JournalOptions options_;
  // The newest checkpoint as initialize() read it, until latestCheckpoint() or a new checkpoint
  // takes it; under checkpointMu_.
  std::optional<CheckpointData> openedCheckpoint_;
  std::mutex checkpointMu_;
  std::atomic<uint64_t> lastSeq_{0};
  std::atomic<uint64_t> firstSeq_{1};
  uint64_t epoch_ = 0;
  std::string instanceId_;
  std::optional<SalvageReport> salvaged_;
  LostRanges lost_;
  LostRanges missingAcknowledged_;
  std::atomic<uint64_t> syncedThrough_{0};  // every seq up to here is durable
  std::mutex highWaterMu_;                  // serialises writes of the mark
  uint64_t highWaterWritten_ = 0;
  std::function<void(const Record&)> listener_;
  // The newest record of every object: complete through the last written seq in a writable
  // journal (the group leader alone changes it, after its write); a read-only journal loads it
  // at its first scanObject. Under headsMu_ (after mu_ when both are held).
  ObjectHeads heads_;
  bool headsLoaded_ = false;
  // What verifyTail noted while it read the tail: the newest record per object among seqs
  // [from, heads.through]. loadHeads merges it rather than reading those records a second time
  // (10 M of them in a journal without a checkpoint); initialize() only.
  struct TailHeads {
    uint64_t from = 0;
    ObjectHeads heads;
  };
  std::optional<TailHeads> tailHeads_;
  int openedFormat_ = kJournalFormatVersion;
  std::mutex headsMu_;

  std::mutex mu_;
  std::deque<Writer*> writers_;
  bool dirty_ = false;  // lazy writes not yet synced
  JournalStats stats_;
  std::optional<Unwritable> unwritable_;  // with mu_

  std::mutex flusherMu_;
  std::condition_variable flusherCv_;
  bool stopping_ = false;
  std::thread flusher_;
};

}  // namespace rayjournal::wal
