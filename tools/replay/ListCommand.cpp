// rayjournal-replay list: every RayJob run in the journal, deleted ones included, with filters.
#include "ReplayCommon.h"
#include "adapters/TimeFormat.h"
#include "projection/RunIndex.h"

namespace rayjournal::replay {

namespace {

std::string orNone(const std::string& s) { return s.empty() ? "-" : s; }

using projection::Run;

void printTable(const std::vector<Run>& runs, uint64_t firstSeq, std::ostream& out) {
  char line[512];
  const char* format = "%-12s %-32s %-12s %-10s %-24s %8s %7s %-20s %s\n";
  std::snprintf(line, sizeof(line), format, "NAMESPACE", "NAME", "STATUS", "JOB", "REASON",
                "ATTEMPTS", "PENDING", "LAST RECORD", "DELETED");
  out << line;
  for (const Run& r : runs) {
    std::snprintf(line, sizeof(line), format, r.ns.c_str(), r.name.c_str(),
                  orNone(r.status).c_str(), orNone(r.jobStatus).c_str(),
                  orNone(r.reason).c_str(), std::to_string(r.attempts).c_str(),
                  std::to_string(r.pending).c_str(), toRfc3339(r.lastMs).c_str(),
                  r.deleted ? toRfc3339(r.deletedMs).c_str() : "-");
    out << line;
  }
  if (runs.empty()) out << "no RayJob matches\n";
  if (firstSeq > 1)
    out << "records before seq " << firstSeq << " were pruned (retention): runs that ended "
        << "before them are not listed\n";
}

}  // namespace

int list(const std::string& dir, const ListFilter& filter, Output output, std::ostream& out) {
  return guarded(out, [&] {
    auto journal = openReadOnly(dir);
    projection::RunIndex index;
    Progress progress(journal->latestSeq() - journal->firstSeq() + 1);
    journal->scan(0, [&](const wal::Record& r) {
      progress.tick();
      index.apply(r);
      return true;
    });
    projection::RunFilter keep;
    keep.ns = filter.ns;
    keep.status = filter.status;
    keep.reason = filter.reason;
    keep.deletedOnly = filter.deletedOnly;
    if (filter.since) {
      keep.sinceSeq = filter.since->seq;
      keep.sinceMs = filter.since->timeMs;
    }
    std::vector<Run> runs = index.runs(keep);
    if (output == Output::Json) {
      json rows = json::array();
      for (const Run& r : runs) rows.push_back(projection::runToJson(r));
      out << json{{"journal", dir}, {"historyFromSeq", journal->firstSeq()}, {"runs", rows}}.dump(2)
          << "\n";
    } else {
      printTable(runs, journal->firstSeq(), out);
    }
    return 0;
  });
}

}  // namespace rayjournal::replay
