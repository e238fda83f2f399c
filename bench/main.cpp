// rayjournal-bench: reproducible measurements with JSON output.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <unistd.h>

#include "JournalBench.h"

int main(int argc, char** argv) {
  CLI::App app{"rayjournal-bench: journal and reconcile benchmarks (JSON output)"};
  app.require_subcommand(1);

  rayjournal::bench::JournalBenchOptions journalOptions;
  journalOptions.dir = (std::filesystem::temp_directory_path() / ("rayjournal-bench-" + std::to_string(getpid()))).string();
  bool json = false;
  auto* journal = app.add_subcommand("journal", "fsync rate of the disk, and sync / group-commit / lazy append rates");
  journal->add_option("--dir", journalOptions.dir, "scratch directory on the disk to measure (removed afterwards)");
  journal->add_option("--seconds", journalOptions.secondsPerPhase, "time budget per phase")->check(CLI::PositiveNumber);
  journal->add_option("--appenders", journalOptions.groupAppenders, "concurrent appenders for group commit")->check(CLI::PositiveNumber);
  journal->add_flag("--json", json, "print one JSON object (the default output)");

  CLI11_PARSE(app, argc, argv);
  try {
    if (*journal) std::cout << rayjournal::bench::runJournalBench(journalOptions).dump(2) << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "rayjournal-bench: " << e.what() << std::endl;
    return 1;
  }
  return 0;
}
