// rayjournal-bench: reproducible measurements with JSON output.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "CacheSizeBench.h"
#include "ClusterScaleBench.h"
#include "DecodeBench.h"
#include "JournalBench.h"
#include "RecoveryBench.h"
#include "ThroughputBench.h"
#include "adapters/Allocator.h"

int main(int argc, char** argv) {
  rayjournal::adapters::configureAllocator();  // as the operator does
  CLI::App app{"rayjournal-bench: journal and reconcile benchmarks (JSON output)"};
  app.require_subcommand(1);

  rayjournal::bench::JournalBenchOptions journalOptions;
  journalOptions.dir =
      (std::filesystem::temp_directory_path() / ("rayjournal-bench-" + std::to_string(getpid())))
          .string();
  bool json = false;
  auto* journal = app.add_subcommand(
      "journal", "fsync rate of the disk, and sync / group-commit / lazy append rates");
  journal->add_option("--dir", journalOptions.dir,
                      "scratch directory on the disk to measure (removed afterwards)");
  journal->add_option("--seconds", journalOptions.secondsPerPhase, "time budget per phase")
      ->check(CLI::PositiveNumber);
  journal
      ->add_option("--appenders", journalOptions.groupAppenders,
                   "concurrent appenders for group commit")
      ->check(CLI::PositiveNumber);
  journal->add_flag("--json", json, "print one JSON object (the default output)");

  rayjournal::bench::ThroughputOptions tp;
  tp.dir = journalOptions.dir;
  bool compare = false;
  auto* throughput = app.add_subcommand(
      "throughput", "N RayJobs through their whole lifecycle on the simulated cluster");
  throughput->add_option("--jobs", tp.jobs, "RayJobs")->capture_default_str();
  throughput->add_option("--workers", tp.workers, "reconcile workers")->capture_default_str();
  throughput->add_option("--max-batch", tp.maxBatch, "ready keys a worker reconciles together (one journal flush)")
      ->capture_default_str();
  throughput->add_option("--durability", tp.durability, "sync, lazy or off")->capture_default_str();
  throughput->add_option("--mode", tp.mode, "k8sjob or http")->capture_default_str();
  throughput->add_option("--dir", tp.dir, "scratch directory for the journal");
  throughput->add_option("--requeue-ms", tp.requeueMs, "poll interval for Running RayJobs")
      ->capture_default_str();
  throughput->add_flag(
      "--compare", compare,
      "run --durability off then sync in one process and report the wall-time ratio");
  throughput->add_flag("--json", json, "print one JSON object (the default output)");

  rayjournal::bench::RecoveryOptions rp;
  rp.dir = journalOptions.dir;
  auto* recovery = app.add_subcommand(
      "recovery", "restart-to-ready time for a journal with N live RayJobs and M records");
  recovery->add_option("--jobs", rp.jobs, "live RayJobs")->capture_default_str();
  recovery->add_option("--history-records", rp.historyRecords, "records of history")
      ->capture_default_str();
  recovery->add_option("--in-doubt", rp.inDoubt, "intents left in doubt")->capture_default_str();
  recovery->add_option("--dir", rp.dir, "scratch directory");
  recovery->add_flag("--keep", rp.keep,
                     "keep the built journals (to time rayjournal-replay on them)");
  recovery->add_flag("--reuse", rp.reuse,
                     "time the journals an earlier --keep run left in --dir (no build; for a "
                     "profiler)");
  recovery->add_flag("--json", json, "print one JSON object (the default output)");

  rayjournal::bench::ClusterScaleOptions cs;
  cs.dir = journalOptions.dir;
  auto* scale = app.add_subcommand(
      "cluster-scale", "one RayCluster of N replicas: the operator's memory while it creates them");
  scale->add_option("--replicas", cs.replicas, "worker replicas")->capture_default_str();
  scale->add_option("--dir", cs.dir, "scratch directory for the journal");
  scale->add_flag("--json", json, "print one JSON object (the default output)");

  rayjournal::bench::DecodeOptions dec;
  auto* decode = app.add_subcommand(
      "decode", "a recorded watch stream decoded three ways: nlohmann DOM, nlohmann SAX, simdjson");
  decode->add_option("--stream", dec.streams, "a file of watch events, one per line (repeatable)")
      ->required();
  decode->add_option("--repeat", dec.repeat, "passes per decoder (the best is kept)")
      ->capture_default_str();
  decode->add_flag("--json", json, "print one JSON object (the default output)");

  rayjournal::bench::CacheSizeOptions cacheSize;
  auto* sizes = app.add_subcommand(
      "cache-size", "per kind, a cached object as a parsed document and packed, and a packed read");
  sizes->add_option("--stream", cacheSize.streams, "a file of watch events, one per line (repeatable)")
      ->required();
  sizes->add_option("--repeat", cacheSize.repeat, "passes when timing reads (the best is kept)")
      ->capture_default_str();
  sizes->add_flag("--json", json, "print one JSON object (the default output)");

  CLI11_PARSE(app, argc, argv);
  try {
    if (*journal)
      std::cout << rayjournal::bench::runJournalBench(journalOptions).dump(2) << std::endl;
    if (*decode) std::cout << rayjournal::bench::runDecode(dec).dump(2) << std::endl;
    if (*sizes) std::cout << rayjournal::bench::runCacheSize(cacheSize).dump(2) << std::endl;
    if (*scale) std::cout << rayjournal::bench::runClusterScale(cs).dump(2) << std::endl;
    if (*recovery) std::cout << rayjournal::bench::runRecovery(rp).dump(2) << std::endl;
    if (*throughput && !compare)
      std::cout << rayjournal::bench::runThroughput(tp).dump(2) << std::endl;
    if (*throughput && compare) {
      auto off = tp, sync = tp;
      off.durability = "off";
      sync.durability = "sync";
      auto a = rayjournal::bench::runThroughput(off);
      auto b = rayjournal::bench::runThroughput(sync);
      nlohmann::json out{{"off", a},
                         {"sync", b},
                         {"sync_over_off_wall_ratio",
                          b["wall_seconds"].get<double>() / a["wall_seconds"].get<double>()}};
      std::cout << out.dump(2) << std::endl;
    }
  } catch (const std::exception& e) {
    std::cerr << "rayjournal-bench: " << e.what() << std::endl;
    return 1;
  }
  return 0;
}
