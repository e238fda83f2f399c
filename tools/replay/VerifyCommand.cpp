// rayjournal-replay verify and reindex.
#include "ReplayCommon.h"

#include "adapters/TimeFormat.h"
#include "events/EventCodec.h"
#include "events/JournalBodies.h"
#include "events/RecordJson.h"
#include "projection/JournalVerifier.h"

namespace rayjournal::replay {

int verify(const std::string& dir, Output output, std::ostream& out) {
  return guarded(out, [&] {
    auto journal = openReadOnly(dir);
    auto report = projection::verifyJournal(*journal);
    if (output == Output::Json) {
      json violations = json::array();
      for (const auto& v : report.violations)
        violations.push_back({{"seq", v.seq}, {"rule", v.rule}, {"message", v.message}});
      out << json{{"journal", dir}, {"ok", report.ok()}, {"records", report.records},
                  {"checkpointsChecked", report.checkpointsChecked},
                  {"checkpointsDropped", report.checkpointsDropped},
                  {"lostSeqs", report.lost.empty() ? "" : report.lost.toString()},
                  {"violations", std::move(violations)}}
                 .dump(2)
          << "\n";
      return report.ok() ? 0 : 1;
    }
    for (const auto& [from, to] : report.lost.ranges())
      out << "LOST seqs " << from << ".." << to
          << " (found missing by a salvage; see its JournalSalvaged record)\n";
    if (report.checkpointsDropped)
      out << "DROPPED " << report.checkpointsDropped
          << " checkpoint states (a salvage could not trust them; replay starts earlier)\n";
    for (const auto& v : report.violations)
      out << "VIOLATION seq " << v.seq << " [" << v.rule << "] " << v.message << "\n";
    out << "verified " << report.records << " records, " << report.checkpointsChecked
        << " checkpoints: "
        << (report.ok() ? "ok" : std::to_string(report.violations.size()) + " violations") << "\n";
    return report.ok() ? 0 : 1;
  });
}

int reindex(const std::string& dir, Output output, std::ostream& out) {
  return guarded(out, [&] {
    std::unique_ptr<wal::Journal> journal;
    try {
      journal = wal::Journal::open(dir, events::journalOptions({}));
    } catch (const wal::CorruptionError&) {
      throw;
    } catch (const wal::JournalError& e) {
      throw OpenError{e.what()};
    }
    uint64_t written = journal->rebuildIndex();
    if (output == Output::Json)
      out << json{{"journal", dir}, {"indexEntries", written}}.dump() << "\n";
    else
      out << "rebuilt the per-object index of " << dir << ": " << written
          << " entries (records no back-pointer chain reaches) and the object heads\n";
    return 0;
  });
}

}  // namespace rayjournal::replay
