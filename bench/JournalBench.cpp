#include "JournalBench.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

#include "events/EventCodec.h"
#include "wal/Journal.h"

namespace rayjournal::bench {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
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

double measureAppends(wal::Journal& journal, int threads, wal::Durability durability,
                      double budget) {
  std::atomic<long> total{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  auto start = Clock::now();
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      long n = 0;
      while (!stop.load(std::memory_order_relaxed))
        journal.append(sampleRecord(t * 100000 + int(n++)), durability);
      total += n;
    });
  }
  while (secondsSince(start) < budget) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  stop = true;
  for (auto& w : workers) w.join();
  return total / secondsSince(start);
}

}  // namespace

nlohmann::json runJournalBench(const JournalBenchOptions& options) {
  std::filesystem::remove_all(options.dir);
  std::filesystem::create_directories(options.dir);
  nlohmann::json out;
  out["fsync_per_sec"] = measureFsync(options.dir, options.secondsPerPhase);
  {
    auto journal = wal::Journal::open(options.dir + "/journal");
    out["sync_appends_per_sec"] =
        measureAppends(*journal, 1, wal::Durability::Sync, options.secondsPerPhase);
    auto before = journal->stats();
    out["group_commit_appends_per_sec"] = measureAppends(
        *journal, options.groupAppenders, wal::Durability::Sync, options.secondsPerPhase);
    auto after = journal->stats();
    out["group_commit_records_per_sync"] =
        double(after.appends - before.appends) /
        double(std::max<uint64_t>(1, after.syncs - before.syncs));
    out["lazy_appends_per_sec"] =
        measureAppends(*journal, 1, wal::Durability::Lazy, options.secondsPerPhase);
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
