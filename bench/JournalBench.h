// `rayjournal-bench journal`: raw fdatasync rate of the disk under the journal directory, then
// the journal's sync, group-commit and lazy append rates on the same disk (single records, and
// batches of 16 like a reconcile round), each with the process CPU per record. Blocking; each phase
// is bounded by a time budget.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rayjournal::bench {

struct JournalBenchOptions {
  std::string dir;             // a scratch directory; created and removed
  double secondsPerPhase = 2;  // time budget of each phase
  int groupAppenders = 64;
};

nlohmann::json runJournalBench(const JournalBenchOptions& options);

}  // namespace rayjournal::bench
