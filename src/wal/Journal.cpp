#include "wal/Journal.h"

#include <filesystem>
#include <map>

#include "wal/Coding.h"
#include "wal/FileNames.h"
#include "wal/JournalError.h"
#include "wal/RecordCodec.h"
#include "wal/RocksStorage.h"

namespace rayjournal::wal {
namespace {

constexpr size_t kMaxGroupWriters = 1024;
constexpr size_t kPruneBatch = 10000;

// The state moved out of the value read, not copied (a state is tens of MB).
CheckpointData decodeCheckpointValue(uint64_t seq, std::string&& value) {
  if (value.size() < 8) throw CorruptionError(seq, "checkpoint value truncated");
  uint64_t covers = decodeSeqKey(std::string_view(value).substr(0, 8));
  value.erase(0, 8);
  return CheckpointData{seq, covers, std::move(value)};
}

}  // namespace

struct Journal::Writer {
  Writer(std::vector<Record>* r, bool s, const std::string* state = nullptr, uint64_t covers = 0)
      : records(r), sync(s), checkpointState(state), checkpointCovers(covers) {}
  std::vector<Record>* records;
  bool sync;
  const std::string* checkpointState;
  uint64_t checkpointCovers;
  bool done = false;
  uint64_t firstSeq = 0;
  std::exception_ptr error;
  std::condition_variable cv;
};

Journal::Journal(std::shared_ptr<JournalStorage> storage, JournalOptions options)
    : storage_(std::move(storage)), options_(std::move(options)) {}

std::unique_ptr<Journal> Journal::open(const std::string& dir, JournalOptions options) {
  if (options.readOnly) {
    auto mode = options.follow ? RocksStorage::Mode::Secondary : RocksStorage::Mode::ReadOnly;
    return open(std::shared_ptr<JournalStorage>(RocksStorage::open(dir, mode)), options);
  }
  finishInterruptedSalvage(dir);
  std::optional<SalvageReport> report;
  try {
    if (RocksStorage::holdsJournal(dir)) {
      JournalOptions check = options;
      check.readOnly = check.strict = true;
      check.follow = false;
      check.checkAll = options.salvage;
      auto checked = open(
          std::shared_ptr<JournalStorage>(RocksStorage::open(dir, RocksStorage::Mode::ReadOnly)),
          check);
      options.tailVerified = true;
      auto journal = open(
          std::shared_ptr<JournalStorage>(RocksStorage::open(dir, RocksStorage::Mode::Normal)),
          options);
      // Nothing wrote in between (the strict pass is read-only, and the writable open failed
      // on the lock if another process had the journal).
      journal->openedCheckpoint_ = std::move(checked->openedCheckpoint_);
      journal->heads_ = std::move(checked->heads_);
      journal->headsLoaded_ = true;
      return journal;
    }
    return open(std::shared_ptr<JournalStorage>(RocksStorage::open(dir, RocksStorage::Mode::Normal)),
                options);
  } catch (const CorruptionError& e) {
    if (!options.salvage) throw;
    report = salvageJournalDirectory(dir, e.what());
    options.tailVerified = false;
  }
  auto journal =
      open(std::shared_ptr<JournalStorage>(RocksStorage::open(dir, RocksStorage::Mode::Normal)),
           options);
  journal->salvaged_ = report;
  journal->appendSalvageRecord();
  return journal;
}

std::unique_ptr<Journal> Journal::open(std::shared_ptr<JournalStorage> storage,
                                       JournalOptions options) {
  std::unique_ptr<Journal> journal(new Journal(std::move(storage), std::move(options)));
  journal->initialize();
  if (!journal->options_.readOnly && journal->options_.lazyFlushInterval.count() > 0) {
    journal->flusher_ = std::thread([j = journal.get()] { j->flusherLoop(); });
  }
  return journal;
}

Journal::~Journal() {
  {
    std::lock_guard lock(flusherMu_);
    stopping_ = true;
  }
  flusherCv_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  if (!options_.readOnly) {
    try {
      sync();
      advanceHighWater();
    } catch (const std::exception&) {
      // Closing after a storage failure: what was acknowledged as synced is already durable.
    }
  }
}

int64_t Journal::now() const {
  if (options_.nowMs) return options_.nowMs();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void Journal::initialize() {
  auto version = storage_->get(Column::Meta, "format_version");
  if (!version) {
    if (storage_->lastKey(Column::Records)) {
      throw CorruptionError(0,
                            "journal " + describe() + " has records but no format_version in meta");
    }
    if (auto mark = storage_->readHighWater()) {
      throw CorruptionError(0, "journal " + describe() + " lost its meta records and every record " +
                                   "(its high-water mark says seqs through " +
                                   std::to_string(*mark) + " were acknowledged)");
    }
    if (options_.readOnly) throw JournalError("journal " + describe() + " is empty");
    instanceId_ = randomHex(16);
    storage_->write({{Column::Meta, "format_version", std::to_string(kJournalFormatVersion)},
                     {Column::Meta, "instance_id", instanceId_},
                     {Column::Meta, "first_seq", "1"},
                     {Column::Meta, "epoch", "0"}},
                    true);
    storage_->writeHighWater(0);
    version = std::to_string(kJournalFormatVersion);
  }
  int found = std::stoi(*version);
  openedFormat_ = found;
  if (found > kJournalFormatVersion) {
    throw JournalError("journal " + describe() + " has format version " + std::to_string(found) +
                       " but this build supports up to version " +
                       std::to_string(kJournalFormatVersion) +
                       "; upgrade rayjournal or point --journal-dir elsewhere");
  }
  instanceId_ = storage_->get(Column::Meta, "instance_id").value_or("");
  firstSeq_ = std::stoull(storage_->get(Column::Meta, "first_seq").value_or("1"));
  if (auto lost = storage_->get(Column::Meta, "lost_ranges")) lost_ = LostRanges::parse(*lost);
  auto last = storage_->lastKey(Column::Records);
  lastSeq_ = std::max(last ? decodeSeqKey(*last) : firstSeq_ - 1, lost_.lastLost());
  syncedThrough_ = lastSeq_.load();
  epoch_ = std::stoull(storage_->get(Column::Meta, "epoch").value_or("0"));
  checkHighWater();
  bool refuseDamage = !options_.readOnly || options_.strict;
  if (refuseDamage && !options_.tailVerified) {
    // Everything a restart will replay must decode; older history is checked by `replay
    // verify` and the scrubber.
    uint64_t tailFrom = firstSeq_;
    auto cp = latestCheckpoint();
    if (cp && !options_.checkAll) tailFrom = cp->coversThrough + 1;
    verifyTail(tailFrom);
    std::lock_guard lock(checkpointMu_);
    openedCheckpoint_ = std::move(cp);
  }
  if (options_.readOnly ? options_.strict : !options_.tailVerified) {
    std::lock_guard lock(headsMu_);
    loadHeads();
  }
  if (options_.readOnly) return;
  ++epoch_;
  std::vector<WriteOp> ops = {{Column::Meta, "epoch", std::to_string(epoch_)}};
  if (openedFormat_ < kJournalFormatVersion) {
    // Upgrade: the records written from now on carry back-pointers; the older ones stay in the
    // by_object index. The heads start empty at the last format-1 record.
    ObjectHeads none;
    none.through = lastSeq_;
    ops.push_back({Column::Meta, "format_version", std::to_string(kJournalFormatVersion)});
    ops.push_back({Column::Meta, "object_heads", none.encode()});
  }
  storage_->write(ops, true);
}

void Journal::loadHeads() {
  ObjectHeads heads;
  if (openedFormat_ < 2) {
    heads.through = lastSeq_;  // no record of format 1 points back
  } else if (auto saved = storage_->get(Column::Meta, "object_heads")) {
    auto decoded = ObjectHeads::decode(*saved);
    if (decoded && decoded->through <= lastSeq_) heads = std::move(*decoded);
  }
  // The tail check read the newest records already; read again only what it did not cover.
  if (tailHeads_ && tailHeads_->from <= heads.through + 1) {
    for (const auto& [key, seq] : tailHeads_->heads.entries()) heads.note(key, seq);
    heads.through = std::max(heads.through, tailHeads_->heads.through);
  }
  tailHeads_.reset();
  catchUpHeads(heads);
  heads_ = std::move(heads);
  headsLoaded_ = true;
}

void Journal::catchUpHeads(ObjectHeads& heads) {
  uint64_t from = std::max(heads.through + 1, firstSeq_.load());
  std::string key;
  storage_->scan(Column::Records, encodeSeqKey(from), [&](std::string_view k, std::string_view v) {
    uint64_t seq = decodeSeqKey(k);
    try {
      if (decodeChainKey(seq, v, key)) heads.note(key, seq);
    } catch (const JournalError&) {
      // An unreadable record is no head; verify and the scrubber report it.
    }
    heads.through = seq;
    return true;
  });
}

uint64_t Journal::refresh() {
  if (!options_.readOnly || !options_.follow || !storage_->catchUp()) return lastSeq_;
  if (auto last = storage_->lastKey(Column::Records))
    lastSeq_ = std::max(lastSeq_.load(), decodeSeqKey(*last));
  return lastSeq_;
}

uint64_t Journal::newestOf(const std::string& indexKey) {
  std::lock_guard lock(headsMu_);
  if (!headsLoaded_) {
    loadHeads();
  } else if (options_.readOnly && options_.follow) {
    catchUpHeads(heads_);
  }
  return heads_.find(indexKey);
}

// The journal must reach every seq it ever acknowledged; a shortfall means acknowledged records
// were lost (the newest write-ahead log truncated or removed).
void Journal::checkHighWater() {
  auto mark = storage_->readHighWater();
  highWaterWritten_ = mark.value_or(0);
  if (!mark || *mark <= lastSeq_) return;
  uint64_t from = lastSeq_ + 1;
  missingAcknowledged_.add(from, *mark);
  if (options_.readOnly && !options_.strict) return;
  throw CorruptionError(from, "journal " + describe() + " ends at seq " +
                                  std::to_string(lastSeq_.load()) + " but seqs " +
                                  std::to_string(from) + ".." + std::to_string(*mark) +
                                  " were acknowledged as durable (HIGHWATER): the newest "
                                  "write-ahead log was truncated or removed");
}

void Journal::requireLost(uint64_t expected, uint64_t present, const std::string& what) const {
  if (lost_.covers(expected, present - 1)) return;
  throw CorruptionError(expected, "record missing (" + what + ")");
}

// Gap-free and checksums intact from `from` to the end (bodies are decoded later, by replay).
void Journal::verifyTail(uint64_t from) {
  uint64_t expected = std::max(from, firstSeq_.load());
  uint64_t last = lastSeq_.load();
  TailHeads tail{expected, {}};
  tail.heads.through = expected - 1;
  std::string key;
  try {
    storage_->scan(
        Column::Records, encodeSeqKey(expected), [&](std::string_view k, std::string_view v) {
          uint64_t seq = decodeSeqKey(k);
          if (seq != expected)
            requireLost(expected, seq, "gap in sequence; next present is " + std::to_string(seq));
          if (decodeChainKey(seq, v, key)) tail.heads.note(key, seq);  // verifies it too
          tail.heads.through = seq;
          expected = seq + 1;
          return true;
        });
  } catch (const CorruptionError& e) {
    if (e.seq() != 0) throw;
    scan(expected, [](const Record&) { return true; });  // locates the unreadable seq
    throw;
  }
  if (expected <= last)
    requireLost(expected, last + 1, "journal ends before the latest seq " + std::to_string(last));
  tail.heads.through = std::max(tail.heads.through, last);  // the seqs after it are lost ones
  tailHeads_ = std::move(tail);
}

void Journal::appendSalvageRecord() {
  Record r;
  r.type = RecordType::Observation;
  if (options_.bodies.salvaged) r.body = options_.bodies.salvaged(*salvaged_);
  append(std::move(r), Durability::Sync);
}

uint64_t Journal::append(Record record, Durability durability) {
  std::vector<Record> records;
  records.push_back(std::move(record));
  return submit(records, durability == Durability::Sync);
}

uint64_t Journal::appendBatch(std::vector<Record> records, Durability durability) {
  if (records.empty()) throw JournalError("journal " + describe() + ": empty batch");
  return submit(records, durability == Durability::Sync);
}

uint64_t Journal::submit(std::vector<Record>& records, bool sync) {
  Writer w(&records, sync && !options_.syncAsLazy);
  return submit(w);
}

uint64_t Journal::submit(Writer& w) {
  if (options_.readOnly) throw JournalError("journal " + describe() + " is open read-only");
  std::unique_lock lock(mu_);
  writers_.push_back(&w);
  while (!w.done && writers_.front() != &w) w.cv.wait(lock);
  if (!w.done) runGroup(lock);
  if (w.error) std::rethrow_exception(w.error);
  return w.firstSeq;
}

void Journal::fillAndCollect(Writer& w, std::vector<WriteOp>& ops, uint64_t& bytes,
                             const ObjectHeads& group) {
  for (auto& r : *w.records) {
    std::string value = encodeRecord(r);
    bytes += value.size();
    if (w.checkpointState && r.type == RecordType::Checkpoint) {
      // Its value: the seq it covers through (8 bytes), then the state, which the storage
      // writes from where it is rather than from a copy.
      ops.push_back({Column::Checkpoints, encodeSeqKey(r.seq),
                     encodeSeqKey(w.checkpointCovers), WriteOp::Kind::Put, *w.checkpointState});
      // The heads beside the checkpoint, so that an open reads only the records after it. They
      // may include the rest of this group: noting those again on open changes nothing.
      ObjectHeads heads;
      {
        std::lock_guard lock(headsMu_);
        heads = heads_;
      }
      for (const auto& [key, seq] : group.entries()) heads.note(key, seq);
      heads.through = group.through;
      ops.push_back({Column::Meta, "object_heads", heads.encode()});
    }
    ops.push_back({Column::Records, encodeSeqKey(r.seq), std::move(value)});
  }
}

// A failed group's error, one object per appender. Appenders that shared one exception object
// would free it from whichever thread let go last, with no ordering against another appender
// still reading its message that a checker can see (libstdc++'s reference counts are not
// instrumented); the message is copied, not shared (runtime_error's string is reference counted).
std::exception_ptr Journal::ownCopy(const std::exception_ptr& error) const {
  try {
    std::rethrow_exception(error);
  } catch (const CorruptionError& e) {
    return std::make_exception_ptr(CorruptionError(e.seq(), std::string(e.cause())));
  } catch (const JournalFullError& e) {
    return std::make_exception_ptr(JournalFullError(std::string(e.what())));
  } catch (const std::exception& e) {
    return std::make_exception_ptr(JournalError(std::string(e.what())));
  } catch (...) {
    return std::make_exception_ptr(JournalError("journal " + describe() + ": write failed"));
  }
}

// Runs by the writer at the front of the queue: takes every queued writer (bounded), assigns
// their seqs in queue order, writes them as one batch, and wakes them.
void Journal::linkToPrevious(Record& r, ObjectHeads& group) {
  if (r.object.empty()) {
    r.previous = 0;
    return;
  }
  std::string key = r.object.indexKey();
  uint64_t previous = group.find(key);
  if (previous == 0) {
    std::lock_guard lock(headsMu_);
    previous = heads_.find(key);
  }
  r.previous = previous;
  group.note(key, r.seq);
}

void Journal::runGroup(std::unique_lock<std::mutex>& lock) {
  std::vector<Writer*> group;
  ObjectHeads groupHeads;  // this group's newest record per object, applied once it is written
  bool sync = false;
  uint64_t next = lastSeq_.load();
  int64_t time = now();
  for (Writer* w : writers_) {
    if (group.size() >= kMaxGroupWriters) break;
    group.push_back(w);
    sync = sync || w->sync;
    w->firstSeq = next + 1;
    for (auto& r : *w->records) {
      r.seq = ++next;
      if (r.timeMs == 0) r.timeMs = time;
      if (r.epoch == 0) r.epoch = epoch_;
      linkToPrevious(r, groupHeads);
    }
  }
  groupHeads.through = next;
  lock.unlock();
  std::exception_ptr error;
  std::vector<WriteOp> ops;
  uint64_t bytes = 0;  // counted into stats_ under the lock: stats() reads it from any thread
  try {
    for (Writer* w : group) fillAndCollect(*w, ops, bytes, groupHeads);
    storage_->write(ops, sync);
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  noteWriteResult(error);
  if (!error) {
    if (listener_) {
      for (Writer* w : group)
        for (const auto& r : *w->records) listener_(r);
    }
    {
      std::lock_guard heads(headsMu_);
      for (const auto& [key, seq] : groupHeads.entries()) heads_.note(key, seq);
      heads_.through = next;
    }
    lastSeq_ = next;
    stats_.bytes += bytes;
    stats_.writes++;
    stats_.appends += next - group.front()->firstSeq + 1;
    if (sync) {
      stats_.syncs++;
      dirty_ = false;
      syncedThrough_ = next;
    } else {
      dirty_ = true;
    }
  }
  for (Writer* w : group) {
    writers_.pop_front();
    w->error = error ? ownCopy(error) : nullptr;
    w->done = true;
    w->cv.notify_one();
  }
  if (!writers_.empty()) writers_.front()->cv.notify_one();
}

void Journal::sync() {
  uint64_t through;
  {
    std::lock_guard lock(mu_);
    dirty_ = false;
    stats_.syncs++;
    through = lastSeq_.load();  // every record up to here is already in the storage
  }
  try {
    storage_->sync();
  } catch (const JournalError&) {
    std::lock_guard lock(mu_);
    noteWriteResult(std::current_exception());
    dirty_ = true;
    throw;
  }
  uint64_t seen = syncedThrough_.load();
  while (seen < through && !syncedThrough_.compare_exchange_weak(seen, through)) {
  }
}

void Journal::advanceHighWater() {
  std::lock_guard lock(highWaterMu_);
  uint64_t through = syncedThrough_.load();
  if (through <= highWaterWritten_) return;
  storage_->writeHighWater(through);
  highWaterWritten_ = through;
}

void Journal::flusherLoop() {
  std::unique_lock lock(flusherMu_);
  auto lastMark = std::chrono::steady_clock::now();
  while (!stopping_) {
    flusherCv_.wait_for(lock, options_.lazyFlushInterval);
    if (stopping_) break;
    bool needed;
    {
      std::lock_guard g(mu_);
      needed = dirty_;
    }
    try {
      if (needed) sync();
      if (std::chrono::steady_clock::now() - lastMark >= options_.highWaterInterval) {
        lastMark = std::chrono::steady_clock::now();
        advanceHighWater();
      }
    } catch (const std::exception&) {
      // Retried on the next tick; appenders see storage errors on their own writes.
    }
  }
}

// With mu_ held.
void Journal::noteWriteResult(const std::exception_ptr& error) {
  if (!error) {
    unwritable_.reset();
    return;
  }
  stats_.failedWrites++;
  Unwritable state;
  try {
    std::rethrow_exception(error);
  } catch (const JournalFullError& e) {
    state = {e.what(), true};
  } catch (const std::exception& e) {
    state = {e.what(), false};
  }
  state.sinceMs = unwritable_ ? unwritable_->sinceMs
                              : std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::steady_clock::now().time_since_epoch())
                                    .count();
  unwritable_ = std::move(state);
}

std::optional<Journal::Unwritable> Journal::unwritable() const {
  std::lock_guard lock(const_cast<std::mutex&>(mu_));
  return unwritable_;
}

JournalStats Journal::stats() const {
  std::lock_guard lock(const_cast<std::mutex&>(mu_));
  return stats_;
}

std::optional<Record> Journal::get(uint64_t seq) {
  auto value = storage_->get(Column::Records, encodeSeqKey(seq));
  if (!value) return std::nullopt;
  return decodeRecord(seq, *value);
}

void Journal::scan(uint64_t from, const RecordVisitor& visit) {
  uint64_t expected = std::max(from, firstSeq_.load());
  uint64_t last = lastSeq_.load();
  bool stopped = false;
  try {
    storage_->scan(
        Column::Records, encodeSeqKey(expected), [&](std::string_view k, std::string_view v) {
          uint64_t seq = decodeSeqKey(k);
          if (seq > last && !options_.readOnly) return false;  // appended after the scan began
          if (seq != expected)
            requireLost(expected, seq, "gap in sequence; next present is " + std::to_string(seq));
          expected = seq + 1;
          stopped = !visit(decodeRecord(seq, v));
          return !stopped;
        });
  } catch (const CorruptionError& e) {
    if (e.seq() != 0) throw;
    // The storage could not read a block: find the first record that cannot be read by itself.
    for (uint64_t seq = expected; seq <= last; ++seq) {
      try {
        auto value = storage_->getSalvaging(Column::Records, encodeSeqKey(seq));
        if (value) decodeRecord(seq, *value);
      } catch (const JournalError&) {
        throw CorruptionError(seq, e.cause());
      }
    }
    throw CorruptionError(expected, e.cause());
  }
  if (!stopped && !options_.readOnly && expected <= last)
    requireLost(expected, last + 1,
                "journal ends at " + std::to_string(expected - 1) + " but latest seq is " +
                    std::to_string(last));
}

void Journal::scanObject(const ObjectRef& object, uint64_t from, const RecordVisitor& visit) {
  std::string key = object.indexKey();
  std::vector<uint64_t> indexed = indexedSeqs(key, from);
  std::vector<uint64_t> chain = chainSeqs(key, from);  // newest first
  std::vector<uint64_t> seqs;
  seqs.reserve(indexed.size() + chain.size());
  std::merge(indexed.begin(), indexed.end(), chain.rbegin(), chain.rend(),
             std::back_inserter(seqs));
  seqs.erase(std::unique(seqs.begin(), seqs.end()), seqs.end());  // salvaged: in both
  for (uint64_t seq : seqs) {
    auto record = get(seq);
    if (!record) continue;  // pruned meanwhile
    if (!visit(*record)) return;
  }
}

std::vector<uint64_t> Journal::indexedSeqs(const std::string& indexKey, uint64_t from) {
  std::vector<uint64_t> seqs;
  std::string prefix = objectIndexPrefix(indexKey);
  storage_->scan(Column::ByObject, prefix + encodeSeqKey(from),
                 [&](std::string_view k, std::string_view) {
                   if (k.substr(0, prefix.size()) != prefix) return false;
                   seqs.push_back(decodeSeqKey(k));
                   return true;
                 });
  return seqs;
}

// Stops where the chain leaves the journal: below `from` or the first seq, at a lost or
// unreadable record, or at a record of another object (damage that verify reports).
std::vector<uint64_t> Journal::chainSeqs(const std::string& indexKey, uint64_t from) {
  std::vector<uint64_t> seqs;
  uint64_t floor = std::max<uint64_t>({from, firstSeq_.load(), 1});
  for (uint64_t seq = newestOf(indexKey); seq >= floor;) {
    std::optional<Record> r;
    try {
      r = get(seq);
    } catch (const JournalError&) {
      break;
    }
    if (!r || r->object.indexKey() != indexKey) break;
    seqs.push_back(seq);
    if (!r->previous) break;
    seq = *r->previous;
  }
  return seqs;
}

uint64_t Journal::writeCheckpoint(uint64_t coversThrough, const std::string& state) {
  std::vector<Record> records(1);
  records[0].type = RecordType::Checkpoint;
  if (options_.bodies.checkpoint)
    records[0].body = options_.bodies.checkpoint({coversThrough, state.size(), crc32(state)});
  Writer w(&records, true, &state, coversThrough);
  {
    std::lock_guard lock(checkpointMu_);
    openedCheckpoint_.reset();
  }
  uint64_t seq = submit(w);
  advanceHighWater();
  return seq;
}

std::optional<CheckpointData> Journal::checkpointAt(uint64_t seq) {
  auto value = storage_->get(Column::Checkpoints, encodeSeqKey(seq));
  if (!value) return std::nullopt;
  return decodeCheckpointValue(seq, std::move(*value));
}

std::optional<CheckpointData> Journal::latestCheckpoint() {
  {
    std::lock_guard lock(checkpointMu_);
    if (openedCheckpoint_) {
      auto cp = std::move(openedCheckpoint_);
      openedCheckpoint_.reset();
      return cp;
    }
  }
  auto last = storage_->lastEntry(Column::Checkpoints);
  if (!last) return std::nullopt;
  return decodeCheckpointValue(decodeSeqKey(last->first), std::move(last->second));
}

std::vector<uint64_t> Journal::checkpointSeqs() {
  std::vector<uint64_t> seqs;
  storage_->scan(Column::Checkpoints, "", [&](std::string_view k, std::string_view) {
    seqs.push_back(decodeSeqKey(k));
    return true;
  });
  return seqs;
}

void Journal::prune(uint64_t beforeSeq) {
  if (beforeSeq <= firstSeq_) return;
  bool covered = false;
  for (uint64_t seq : checkpointSeqs()) {
    if (seq >= beforeSeq && checkpointAt(seq)->coversThrough + 1 >= beforeSeq) covered = true;
  }
  if (!covered) {
    throw JournalError("journal " + describe() + ": cannot prune before seq " +
                       std::to_string(beforeSeq) +
                       ": no checkpoint at or after it covers the pruned records");
  }
  {
    std::lock_guard lock(checkpointMu_);
    openedCheckpoint_.reset();
  }
  // Move first_seq first: a crash mid-prune leaves only unreachable records, never a gap.
  storage_->write({{Column::Meta, "first_seq", std::to_string(beforeSeq)}}, true);
  uint64_t from = firstSeq_.exchange(beforeSeq);
  {
    std::lock_guard lock(mu_);
    stats_.prunedRecords += beforeSeq - from;
  }
  std::vector<WriteOp> ops;
  storage_->scan(Column::Records, encodeSeqKey(from), [&](std::string_view k, std::string_view) {
    if (decodeSeqKey(k) >= beforeSeq) return false;
    ops.push_back({Column::Records, std::string(k), "", WriteOp::Kind::Delete});
    if (ops.size() >= kPruneBatch) {
      storage_->write(ops, false);
      ops.clear();
    }
    return true;
  });
  for (uint64_t seq : checkpointSeqs()) {
    if (seq < beforeSeq)
      ops.push_back({Column::Checkpoints, encodeSeqKey(seq), "", WriteOp::Kind::Delete});
  }
  storage_->write(ops, true);
  {
    std::lock_guard lock(headsMu_);
    heads_.dropBefore(beforeSeq);
  }
  // Deleted keys free their space only once compacted away.
  storage_->compactBefore(Column::Records, encodeSeqKey(beforeSeq));
  pruneIndexBefore(beforeSeq);
}

// The index holds only records of format 1 and of salvages: few, and none once pruned away.
void Journal::pruneIndexBefore(uint64_t beforeSeq) {
  std::vector<WriteOp> ops;
  bool deleted = false;
  storage_->scan(Column::ByObject, "", [&](std::string_view k, std::string_view) {
    if (decodeSeqKey(k) < beforeSeq) {
      ops.push_back({Column::ByObject, std::string(k), "", WriteOp::Kind::Delete});
      deleted = true;
    }
    if (ops.size() >= kPruneBatch) {
      storage_->write(ops, false);
      ops.clear();
    }
    return true;
  });
  if (!deleted) return;
  if (!ops.empty()) storage_->write(ops, true);
  storage_->compactBefore(Column::ByObject, "");
}

Journal::ScrubResult Journal::scrub(uint64_t from, uint64_t maxRecords) {
  ScrubResult result;
  uint64_t expected = std::max(from, firstSeq_.load()), last = lastSeq_.load(), seen = 0;
  auto corrupt = [&](uint64_t seq, const std::string& cause) {
    result.corrupt.push_back("seq " + std::to_string(seq) + ": " + cause);
  };
  try {
    storage_->scan(Column::Records, encodeSeqKey(expected),
                   [&](std::string_view k, std::string_view v) {
                     uint64_t seq = decodeSeqKey(k);
                     if (seq > last || seen++ >= maxRecords) return false;
                     if (seq != expected && !lost_.covers(expected, seq - 1))
                       corrupt(expected, "records " + std::to_string(expected) + ".." +
                                             std::to_string(seq - 1) + " missing");
                     try {
                       verifyRecord(seq, v);
                     } catch (const JournalError& e) {
                       corrupt(seq, e.what());
                     }
                     expected = seq + 1;
                     return true;
                   });
  } catch (const JournalError& e) {
    corrupt(expected, e.what());  // an unreadable block: skip past it on the next step
    ++expected;
  }
  result.next = expected;
  std::lock_guard lock(mu_);
  stats_.scrubbedRecords += seen;
  stats_.scrubCorrupt += result.corrupt.size();
  return result;
}

uint64_t Journal::firstSeqAtOrAfter(int64_t timeMs) {
  uint64_t low = firstSeq_.load(), high = lastSeq_.load() + 1;  // answer in [low, high]
  while (low < high) {
    uint64_t mid = low + (high - low) / 2, probe = mid;
    std::optional<Record> r;
    while (probe < high && !(r = get(probe))) ++probe;  // lost or pruned seqs have no time
    if (!r || r->timeMs >= timeMs)
      high = mid;
    else
      low = probe + 1;
  }
  return low;
}

bool Journal::ChainFacts::needsIndex(const Record& r) const {
  if (!r.previous) return !r.object.empty();
  auto it = linkedFrom.find(r.object.indexKey());
  return it != linkedFrom.end() && r.seq < it->second;
}

// A back-pointer is sound when it names the object's previous record; a first one may also
// name nothing, or a pruned seq. Naming a lost seq is no fault of the chain, but the records
// before it are then reachable only through the index (a salvage wrote it).
Journal::ChainFacts Journal::followChains(const std::function<void(std::string)>& problem) {
  ChainFacts facts;
  facts.through = lastSeq_;
  scan(firstSeq_, [&](const Record& r) {
    if (r.object.empty() || !r.previous) return true;
    std::string key = r.object.indexKey();
    auto seen = facts.newest.find(key);
    uint64_t expected = seen == facts.newest.end() ? 0 : seen->second, previous = *r.previous;
    bool first = expected == 0 && (previous == 0 || previous < firstSeq_);
    if (previous != expected && !first) {
      facts.linkedFrom[key] = r.seq;
      if (!(previous > expected && lost_.contains(previous)))
        problem("record seq " + std::to_string(r.seq) + " of " + key + " points back at seq " +
                std::to_string(previous) + " instead of " +
                (expected ? "seq " + std::to_string(expected) : std::string("nothing")));
    }
    facts.newest[key] = r.seq;
    return true;
  });
  return facts;
}

std::vector<std::string> Journal::checkIndex(size_t maxProblems) {
  std::vector<std::string> problems;
  auto problem = [&](std::string text) {
    if (problems.size() < maxProblems) problems.push_back(std::move(text));
  };
  storage_->scan(Column::ByObject, "", [&](std::string_view k, std::string_view) {
    if (k.size() < 9 || k[k.size() - 9] != '\0') {
      problem("index entry of " + std::to_string(k.size()) + " bytes is malformed");
      return true;
    }
    uint64_t seq = decodeSeqKey(k.substr(k.size() - 8));
    std::string object(k.substr(0, k.size() - 9));
    if (seq < firstSeq_) return true;  // left by a prune that stopped halfway: unreachable
    auto value = storage_->get(Column::Records, encodeSeqKey(seq));
    if (!value) {
      if (!lost_.contains(seq)) problem("index entry for " + object + " points at seq " +
                                        std::to_string(seq) + ", which is not in the journal");
      return true;
    }
    Record r = decodeRecord(seq, *value);
    if (r.object.indexKey() != object)
      problem("index entry for " + object + " points at seq " + std::to_string(seq) +
              ", a record of " + (r.object.empty() ? "no object" : r.object.indexKey()));
    return true;
  });
  ChainFacts facts = followChains(problem);
  scan(firstSeq_, [&](const Record& r) {
    if (facts.needsIndex(r) &&
        !storage_->get(Column::ByObject, encodeObjectIndexKey(r.object.indexKey(), r.seq)))
      problem("record seq " + std::to_string(r.seq) + " of " + r.object.indexKey() +
              " is missing from the per-object index" +
              (r.previous ? " (no back-pointer chain reaches it)" : ""));
    return true;
  });
  checkHeads(facts, problem);
  return problems;
}

void Journal::checkHeads(const ChainFacts& facts, const std::function<void(std::string)>& problem) {
  std::lock_guard lock(headsMu_);
  if (!headsLoaded_) loadHeads();
  for (const auto& [key, seq] : facts.newest) {
    if (uint64_t head = heads_.find(key); head != seq)
      problem("the newest record of " + key + " is seq " + std::to_string(seq) +
              " but its head says seq " + std::to_string(head));
  }
  for (const auto& [key, seq] : heads_.entries()) {
    if (seq >= firstSeq_ && !facts.newest.count(key))
      problem("the head of " + key + " is seq " + std::to_string(seq) +
              ", which is not a record of it");
  }
}

uint64_t Journal::rebuildIndex() {
  if (options_.readOnly) throw JournalError("journal " + describe() + " is open read-only");
  std::vector<WriteOp> ops;
  auto flush = [&](size_t at) {
    if (ops.size() < at) return;
    storage_->write(ops, false);
    ops.clear();
  };
  storage_->scan(Column::ByObject, "", [&](std::string_view k, std::string_view) {
    ops.push_back({Column::ByObject, std::string(k), "", WriteOp::Kind::Delete});
    flush(kPruneBatch);
    return true;
  });
  flush(1);
  ChainFacts facts = followChains([](const std::string&) {});
  uint64_t written = 0;
  scan(firstSeq_, [&](const Record& r) {
    if (!facts.needsIndex(r)) return true;
    ops.push_back({Column::ByObject, encodeObjectIndexKey(r.object.indexKey(), r.seq), ""});
    ++written;
    flush(kPruneBatch);
    return true;
  });
  flush(1);
  rewriteHeads(facts);
  sync();
  return written;
}

// Appends are blocked (mu_) while the heads are replaced, so none is missed.
void Journal::rewriteHeads(const ChainFacts& facts) {
  std::lock_guard lock(mu_);
  ObjectHeads heads;
  for (const auto& [key, seq] : facts.newest) heads.note(key, seq);
  heads.through = facts.through;
  std::lock_guard guard(headsMu_);
  catchUpHeads(heads);
  storage_->write({{Column::Meta, "object_heads", heads.encode()}}, true);
  heads_ = std::move(heads);
  headsLoaded_ = true;
}

}  // namespace rayjournal::wal
