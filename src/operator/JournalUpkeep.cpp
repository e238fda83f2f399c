#include "operator/JournalUpkeep.h"

#include <spdlog/spdlog.h>

#include "wal/JournalError.h"
#include "wal/Retention.h"

namespace rayjournal::operator_ {
namespace {

constexpr auto kTick = std::chrono::milliseconds(200);
constexpr size_t kScrubLinesPerStep = 5;

}  // namespace

JournalUpkeep::JournalUpkeep(wal::Journal& journal, UpkeepOptions options)
    : journal_(journal), options_(std::move(options)), thread_([this] { run(); }) {}

JournalUpkeep::~JournalUpkeep() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void JournalUpkeep::run() {
  auto lastRetention = std::chrono::steady_clock::now();
  auto lastScrub = lastRetention;
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, kTick, [this] { return stopping_; })) {
    lock.unlock();
    auto now = std::chrono::steady_clock::now();
    watchWritable(now);
    try {
      if (now - lastRetention >= options_.retentionEvery) {
        lastRetention = now;
        retainNow();
      }
      if (options_.scrubRecordsPerSecond && now - lastScrub >= std::chrono::seconds(1)) {
        lastScrub = now;
        scrubStep();
      }
    } catch (const wal::JournalError& e) {
      spdlog::warn("journal {}: upkeep deferred: {}", journal_.describe(), e.what());
    }
    lock.lock();
  }
  // A recovery since the last tick is said before the operator stops: a full disk that cleared
  // just before an exit-when-idle must not leave the log saying the journal is still down.
  lock.unlock();
  watchWritable(std::chrono::steady_clock::now());
}

void JournalUpkeep::watchWritable(std::chrono::steady_clock::time_point now) {
  auto state = journal_.unwritable();
  if (state && (!down_ || now - lastSaid_ >= options_.reminder)) {
    spdlog::warn("journal {} cannot be written{}: {}; no side effect executes until it can "
                 "(/readyz is unready); retrying by itself",
                 journal_.describe(), state->diskFull ? " (disk full)" : "", state->cause);
    lastSaid_ = now;
  } else if (!state && down_) {
    spdlog::info("journal {} is writable again; resuming", journal_.describe());
  }
  down_ = state.has_value();
}

// The oldest seq to keep so that the journal fits maxBytes, assuming records of average size.
uint64_t JournalUpkeep::keepFromBySize() {
  uint64_t bytes = journal_.diskBytes(), first = journal_.firstSeq(), last = journal_.latestSeq();
  if (!options_.maxBytes || bytes <= options_.maxBytes || last < first) return 0;
  double excess = double(bytes - options_.maxBytes) / double(bytes);
  return first + uint64_t(excess * double(last - first + 1));
}

uint64_t JournalUpkeep::retainNow() {
  if (journal_.unwritable()) return 0;
  auto checkpoint = journal_.latestCheckpoint();
  wal::RetentionInputs in;
  in.firstSeq = journal_.firstSeq();
  in.checkpointCovers = checkpoint ? checkpoint->coversThrough : 0;
  in.oldestInDoubt = options_.oldestInDoubt ? options_.oldestInDoubt() : 0;
  if (options_.keepMs > 0 && options_.nowMs)
    in.keepFromByAge = journal_.firstSeqAtOrAfter(options_.nowMs() - options_.keepMs);
  in.keepFromBySize = keepFromBySize();
  uint64_t before = wal::pruneBefore(in);
  if (before <= in.firstSeq) return 0;
  journal_.prune(before);
  spdlog::info("journal {}: pruned records {}..{} (retention: {} h{}); {} bytes on disk",
               journal_.describe(), in.firstSeq, before - 1, options_.keepMs / 3600000.0,
               options_.maxBytes ? ", " + std::to_string(options_.maxBytes) + " bytes" : "",
               journal_.diskBytes());
  return before - in.firstSeq;
}

void JournalUpkeep::scrubStep() {
  if (scrubNext_ < journal_.firstSeq() || scrubNext_ > journal_.latestSeq())
    scrubNext_ = journal_.firstSeq();
  auto result = journal_.scrub(scrubNext_, options_.scrubRecordsPerSecond);
  for (size_t i = 0; i < result.corrupt.size() && i < kScrubLinesPerStep; ++i)
    spdlog::error("journal {}: scrub found damaged history: {}; rayjournal-replay verify "
                  "reports it, --salvage-journal at the next start keeps everything else",
                  journal_.describe(), result.corrupt[i]);
  scrubNext_ = result.next;
}

}  // namespace rayjournal::operator_
