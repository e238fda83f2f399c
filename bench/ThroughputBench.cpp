#include "ThroughputBench.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "events/JournalBodies.h"
#include "adapters/CountingClients.h"
#include "adapters/kube/InformerCache.h"
#include "adapters/sim/SimWorld.h"
#include "runtime/Stack.h"
#include "support/SampleRayJob.h"
#include "wal/MemoryStorage.h"

namespace rayjournal::bench {
namespace {

using nlohmann::json;

double cpuSeconds() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return double(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double peakRssMb() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;
}

std::unique_ptr<wal::Journal> openJournal(const ThroughputOptions& o) {
  wal::JournalOptions jo;
  jo.syncAsLazy = o.durability != "sync";
  jo = events::journalOptions(jo);
  if (o.durability == "off") return wal::Journal::open(std::make_shared<wal::MemoryStorage>(), jo);
  std::filesystem::remove_all(o.dir);
  return wal::Journal::open(o.dir + "/journal", jo);
}

}  // namespace

json runThroughput(const ThroughputOptions& o) {
  if (o.durability != "sync" && o.durability != "lazy" && o.durability != "off")
    throw std::invalid_argument("--durability must be sync, lazy or off");
  if (o.mode != "k8sjob" && o.mode != "http")
    throw std::invalid_argument("--mode must be k8sjob or http");
  spdlog::set_level(spdlog::level::warn);
  SystemClock clock;
  sim::SimKube kube(clock);
  sim::SimRay ray(kube, clock);
  ray.setPendingMs(0);
  sim::SimWorld world(kube, ray, clock, {0, 0});
  CallCounter counter;
  CountingKubeClient countingKube(kube, counter);
  CountingRayClient countingRay(ray, counter);
  // The operator's Stack reads through its informer caches as against a real API server, so the
  // counted calls are the ones a real cluster would serve.
  auto journal = openJournal(o);
  runtime::StackOptions mo;
  mo.workers = o.workers;
  mo.clusterWorkers = o.workers;
  mo.maxBatch = size_t(std::max(1, o.maxBatch));
  mo.cacheSyncTimeout = std::chrono::seconds(10);
  mo.recordLatencies = true;
  mo.checkpointEveryRecords = 100000;
  mo.decide.requeueMs = o.requeueMs;
  std::mutex mu;
  std::deque<std::string> toDelete;
  std::atomic<int> deleted{0};
  kube.watch("RayJob", [&](kube::WatchEventType type, const json& o2) {
    if (type == kube::WatchEventType::Deleted) {
      ++deleted;
      return;
    }
    const json& meta = o2["metadata"];
    if (!meta.contains("deletionTimestamp") &&
        o2.value("status", json::object()).value("jobDeploymentStatus", "") == "Complete") {
      std::lock_guard lock(mu);
      toDelete.push_back(meta["name"]);
    }
  });
  runtime::Stack manager(*journal, countingKube, countingRay, clock, mo);
  manager.start();
  auto start = std::chrono::steady_clock::now();
  double cpuAtStart = cpuSeconds();
  for (int i = 0; i < o.jobs; ++i)
    kube.create("RayJob", testing::sampleRayJob("bench-" + std::to_string(i),
                                                o.mode == "http" ? "HTTPMode" : "K8sJobMode",
                                                "SUCCEEDED", "0s"));
  std::set<std::string> deleting;
  while (deleted < o.jobs) {
    world.advance();
    std::deque<std::string> batch;
    {
      std::lock_guard lock(mu);
      batch.swap(toDelete);
    }
    for (const auto& name : batch) {
      if (!deleting.insert(name).second) continue;
      kube.remove("RayJob", "default", name);
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
        o.timeoutSeconds) {
      throw std::runtime_error(
          "throughput run did not finish within " + std::to_string(o.timeoutSeconds) + " s (" +
          std::to_string(deleted.load()) + " of " + std::to_string(o.jobs) + " RayJobs done)");
    }
    // The simulated kubelet and Job controller act in rounds, as real ones do; between rounds the
    // controller has the cores.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // CPU of the whole process (operator and simulated cluster): steadier than wall time on a
  // shared machine.
  double cpu = cpuSeconds() - cpuAtStart;
  manager.stop();
  auto stats = journal->stats();
  auto lat = manager.latenciesUs();
  std::sort(lat.begin(), lat.end());
  auto pct = [&](double p) {
    return lat.empty() ? 0u : lat[std::min(lat.size() - 1, size_t(p * lat.size()))];
  };
  json calls = json::object();
  uint64_t totalCalls = 0;
  for (const auto& [what, n] : counter.counts()) {
    calls[what] = double(n) / o.jobs;
    totalCalls += n;
  }
  uint64_t sideEffects = stats.appends;  // refined below from intents
  json out{{"jobs", o.jobs},
           {"workers", o.workers},
           {"max_batch", o.maxBatch},
           {"durability", o.durability},
           {"mode", o.mode},
           {"wall_seconds", wall},
           {"rayjobs_per_sec", o.jobs / wall},
           {"cpu_seconds", cpu},
           {"cpu_ms_per_rayjob", 1000 * cpu / o.jobs},
           {"reconciles_per_sec", manager.reconciles() / wall},
           {"raycluster_reconciles_per_sec", manager.clusterReconciles() / wall},
           {"journal_records", stats.appends},
           {"journal_syncs", stats.syncs},
           {"records_per_sync", stats.syncs ? double(stats.appends) / stats.syncs : 0.0},
           {"reconcile_latency_p50_us", pct(0.5)},
           {"reconcile_latency_p99_us", pct(0.99)},
           {"peak_rss_mb", peakRssMb()},
           {"bytes_per_rayjob_journal", double(stats.bytes) / o.jobs},
           {"api_calls_per_rayjob", calls},
           {"api_calls_per_rayjob_total", double(totalCalls) / o.jobs}};
  (void)sideEffects;
  // What the simulated cluster still holds at the end (the RayJobs are deleted as they finish).
  json held = json::object();
  for (const auto& [kind, counts] : kube.storedByKind())
    held[kind] = {{"objects", counts.first}, {"bytes", counts.second}};
  out["simulated_cluster_holds"] = held;
  uint64_t intents = 0;
  journal->scan(0, [&](const wal::Record& r) {
    intents += r.type == wal::RecordType::Intent;
    return true;
  });
  out["side_effects_per_sec"] = intents / wall;
  out["side_effects_per_rayjob"] = double(intents) / o.jobs;
  journal.reset();
  if (o.durability != "off") std::filesystem::remove_all(o.dir);
  return out;
}

}  // namespace rayjournal::bench
