// rayjournal-sim: deterministic crash simulation over many seeds.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <iostream>
#include <mutex>
#include <thread>

#include "DeterministicSim.h"

int main(int argc, char** argv) {
  CLI::App app{
      "rayjournal-sim: deterministic simulation of the controller with crashes and faults; "
      "each seed is run without and with crashes and the invariants are checked"};
  uint64_t seeds = 100, start = 1;
  int threads = 2;
  bool json = false, noShrink = false;
  std::optional<uint64_t> one;
  rayjournal::simtool::SimConfig base;
  app.add_option("--seeds", seeds, "number of seeds to run")->capture_default_str();
  app.add_option("--start", start, "first seed")->capture_default_str();
  app.add_option("--seed", one, "run exactly this seed (verbose)");
  app.add_option("--threads", threads, "parallel runs")->capture_default_str();
  app.add_option("--max-crashes", base.maxCrashes, "crashes per run at most")
      ->capture_default_str();
  app.add_option("--crash-probability", base.crashProbability,
                 "chance of a crash at each journal boundary")
      ->capture_default_str();
  app.add_flag("--json", json, "print the JSON summary only");
  app.add_flag("--no-shrink", noShrink, "do not shrink failing seeds");
  bool dumpJournal = false;
  app.add_flag("--dump-journal", dumpJournal,
               "with --seed: print the crash run's journal as JSON lines");
  std::vector<uint64_t> seedList;
  app.add_option("--autoscaling-share", base.autoscalingShare,
                 "share of RayJobs with a worker group whose cluster autoscales (0 keeps seeds "
                 "pinned before autoscaling as they were found)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--gcs-ft-share", base.gcsFtShare,
                 "share of RayJobs with a cluster of their own whose cluster has GCS fault "
                 "tolerance, so that its deletion runs the Redis cleanup (0 keeps seeds pinned "
                 "before it as they were found)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--seed-list", seedList, "run exactly these seeds (pinned regressions)")
      ->delimiter(',');
  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(spdlog::level::off);

  if (one) {
    base.seed = *one;
    base.verbose = dumpJournal;
    std::cout << rayjournal::simtool::describeWorkload(base).dump(2) << "\n";
    auto r = rayjournal::simtool::runSeed(base);
    std::cout << "seed " << r.seed << ": " << r.crashes << " crashes, " << r.faults << " faults, "
              << r.violations.size() << " violations\n";
    for (const auto& v : r.violations) std::cout << "  " << v << "\n";
    for (const auto& record : r.journal) std::cout << record.dump() << "\n";
    std::cout << r.finalStates.dump(2) << "\n";
    return r.violations.empty() ? 0 : 1;
  }
  if (!seedList.empty()) {
    int failed = 0;
    for (uint64_t seed : seedList) {
      auto config = base;
      config.seed = seed;
      auto r = rayjournal::simtool::runSeed(config);
      std::cout << "seed " << seed << ": " << r.crashes << " crashes, " << r.faults << " faults, "
                << r.violations.size() << " violations\n";
      for (const auto& v : r.violations) std::cout << "  " << v << "\n";
      failed += !r.violations.empty();
    }
    std::cout << (seedList.size() - failed) << " passed, " << failed << " failed" << std::endl;
    return failed ? 1 : 0;
  }
  std::atomic<uint64_t> next{start}, crashes{0}, faults{0}, violations{0};
  std::mutex mu;
  std::vector<uint64_t> failing;
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, threads); ++t) {
    pool.emplace_back([&] {
      for (uint64_t seed; (seed = next++) < start + seeds;) {
        auto config = base;
        config.seed = seed;
        rayjournal::simtool::SimResult r;
        try {
          r = rayjournal::simtool::runSeed(config);
        } catch (const std::exception& e) {
          r.violations.push_back(std::string("the simulation itself failed: ") + e.what());
        }
        crashes += r.crashes;
        faults += r.faults;
        violations += r.violations.size();
        if (!r.violations.empty()) {
          std::lock_guard lock(mu);
          failing.push_back(seed);
          std::cerr << "seed " << seed << " FAILED (rerun: rayjournal-sim --seed " << seed << ")\n";
          for (const auto& v : r.violations) std::cerr << "  " << v << "\n";
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  std::sort(failing.begin(), failing.end());
  nlohmann::json out{{"seeds", seeds},
                     {"start", start},
                     {"crashes_injected", crashes.load()},
                     {"faults_injected", faults.load()},
                     {"violations", violations.load()},
                     {"autoscaling_share", base.autoscalingShare},
                     {"gcs_ft_share", base.gcsFtShare},
                     {"failing_seeds", failing}};
  if (!failing.empty() && !noShrink) {
    auto config = base;
    config.seed = failing.front();
    auto small = rayjournal::simtool::shrink(config);
    out["shrunk"] = {
        {"seed", small.seed}, {"job_mask", small.jobMask}, {"max_crashes", small.maxCrashes}};
  }
  std::cout << out.dump(json ? -1 : 2) << std::endl;
  if (!json)
    std::cout << (seeds - failing.size()) << " passed, " << failing.size() << " failed"
              << std::endl;
  return violations == 0 ? 0 : 1;
}
