#include "JournalBench.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

#include "ThroughputBench.h"
#include "events/EventCodec.h"
#include "wal/Journal.h"

namespace rayjournal::bench {
namespace {

using Clock = std::chrono::steady_clock;
// Records per append in the batched phase: as many as the keys one worker of the throughput
// bench reconciles together at its default --max-batch (one journal flush).
const int kControllerBatch = ThroughputOptions{}.maxBatch;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU seconds of the whole process (every appender and the journal's own threads).
double processCpuSeconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

double measureFsync(const std::string& dir, double budget) {
  std::string path = dir + "/fsync-probe";
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + path);
  std::vector<char> block(4096, 'x');
  auto start = Clock::now();
  long count = 0;
  while (secondsSince(start) < budget) {
    if (::write(fd, block.data(), block.size()) != ssize_t(block.size()) || ::fdatasync(fd) != 0) {
      ::close(fd);
      throw std::runtime_error("write/fdatasync failed on " + path);
    }
    ++count;
  }
  double rate = count / secondsSince(start);
  ::close(fd);
  std::filesystem::remove(path);
  return rate;
}

// A record shaped like the controller's intents: a RayJob identity and a small body.
wal::Record sampleRecord(int i) {
  wal::Record r;
  r.type = wal::RecordType::Intent;
  r.object = {"RayJob", "default", "rayjob-" + std::to_string(i % 1000),
              "3f9a2c1e-8d7b-4c2a-9e1f-" + std::to_string(i % 1000)};
  r.attempt = 1;
  r.body = events::encode(events::IntentBody{
      events::Action::CreateRayCluster, "rayjob-" + std::to_string(i % 1000) + "-x7k2p",
      "creating RayCluster", {}, "", "", ""});
  return r;
}

struct AppendRate {
  double perSecond = 0;
  double cpuMicrosPerRecord = 0;  // process CPU, building the sample records included
};

// Each appender appends `batch` records per call (the controller appends one batch per reconcile
// round: its intents and observations together).
AppendRate measureAppends(wal::Journal& journal, int threads, wal::Durability durability,
                          double budget, int batch = 1) {
  std::atomic<long> total{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  auto start = Clock::now();
  double cpuStart = processCpuSeconds();
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      long n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        std::vector<wal::Record> records;
        for (int i = 0; i < batch; ++i) records.push_back(sampleRecord(t * 100000 + int(n++)));
        journal.appendBatch(std::move(records), durability);
      }
      total += n;
    });
  }
  while (secondsSince(start) < budget) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  stop = true;
  for (auto& w : workers) w.join();
  double cpu = processCpuSeconds() - cpuStart;
  return {total / secondsSince(start), cpu * 1e6 / double(std::max<long>(1, total))};
}

}  // namespace

nlohmann::json runJournalBench(const JournalBenchOptions& options) {
  std::filesystem::remove_all(options.dir);
  std::filesystem::create_directories(options.dir);
  nlohmann::json out;
  out["fsync_per_sec"] = measureFsync(options.dir, options.secondsPerPhase);
  {
    auto journal = wal::Journal::open(options.dir + "/journal");
    AppendRate sync = measureAppends(*journal, 1, wal::Durability::Sync, options.secondsPerPhase);
    out["sync_appends_per_sec"] = sync.perSecond;
    out["sync_cpu_us_per_record"] = sync.cpuMicrosPerRecord;
    auto before = journal->stats();
    AppendRate group = measureAppends(*journal, options.groupAppenders, wal::Durability::Sync,
                                      options.secondsPerPhase);
    out["group_commit_appends_per_sec"] = group.perSecond;
    out["group_commit_cpu_us_per_record"] = group.cpuMicrosPerRecord;
    auto after = journal->stats();
    out["group_commit_records_per_sync"] =
        double(after.appends - before.appends) /
        double(std::max<uint64_t>(1, after.syncs - before.syncs));
    AppendRate lazy = measureAppends(*journal, 1, wal::Durability::Lazy, options.secondsPerPhase);
    out["lazy_appends_per_sec"] = lazy.perSecond;
    out["lazy_cpu_us_per_record"] = lazy.cpuMicrosPerRecord;
    AppendRate batched = measureAppends(*journal, 1, wal::Durability::Lazy, options.secondsPerPhase,
                                        kControllerBatch);
    out["lazy_batch_appends_per_sec"] = batched.perSecond;
    out["lazy_batch_cpu_us_per_record"] = batched.cpuMicrosPerRecord;
    out["lazy_batch_records"] = kControllerBatch;
    auto stats = journal->stats();
    out["record_bytes_avg"] = double(stats.bytes) / double(std::max<uint64_t>(1, stats.appends));
    out["records"] = stats.appends;
  }
  out["sync_to_fsync_ratio"] =
      out["sync_appends_per_sec"].get<double>() / out["fsync_per_sec"].get<double>();
  out["group_to_sync_ratio"] =
      out["group_commit_appends_per_sec"].get<double>() / out["sync_appends_per_sec"].get<double>();
  out["group_appenders"] = options.groupAppenders;
  std::filesystem::remove_all(options.dir);
  return out;
}

}  // namespace rayjournal::bench
