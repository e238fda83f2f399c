// rayjournal-replay state --at and export.
#include "ReplayCommon.h"

#include <set>

#include "adapters/TimeFormat.h"
#include "events/EventCodec.h"
#include "events/JournalBodies.h"
#include "events/RecordJson.h"

namespace rayjournal::replay {

namespace {

// One RayJob's projection through a seq, from its own records only (the per-object index): a
// RayJob's state depends on nothing else, and reading it costs that RayJob's records.
json jobStateThrough(wal::Journal& journal, const std::string& key, uint64_t through) {
  projection::JobProjection p;
  auto slash = key.find('/');
  journal.scanObject({"RayJob", key.substr(0, slash), key.substr(slash + 1), ""}, 0,
                     [&](const wal::Record& r) {
                       if (r.seq > through) return false;
                       p.apply(r);
                       return true;
                     });
  return p.toJson(key);
}

// Every RayJob's state, printed one RayJob at a time in the layout of json::dump(2): memory
// follows one RayJob and the list of names, not the journal.
void streamAllStates(wal::Journal& journal, uint64_t through, std::ostream& out) {
  std::set<std::string> keys;
  journal.scan(0, [&](const wal::Record& r) {
    if (r.seq > through) return false;
    if (r.object.kind == "RayJob") keys.insert(r.object.ns + "/" + r.object.name);
    return true;
  });
  out << "{\n  \"at_seq\": " << through << ",\n  \"jobs\": {";
  bool firstJob = true;
  for (const auto& key : keys) {
    json one = jobStateThrough(journal, key, through);
    if (!one.contains(key)) continue;
    std::string body = one[key].dump(2);
    std::string indented;
    for (char c : body) indented += c == '\n' ? std::string("\n    ") : std::string(1, c);
    out << (firstJob ? "\n" : ",\n") << "    " << json(key).dump() << ": " << indented;
    firstJob = false;
  }
  out << (firstJob ? "}\n}\n" : "\n  }\n}\n");
}

}  // namespace

int state(const std::string& dir, const std::optional<Target>& target,
          const std::optional<Position>& at, std::ostream& out) {
  return guarded(out, [&] {
    auto journal = openReadOnly(dir);
    uint64_t through = at ? seqAt(*journal, *at) : journal->latestSeq();
    if (journal->firstSeq() > 1) {  // pruned: the history before is in a checkpoint
      auto holder = projectionAt(*journal, through);
      json result{{"at_seq", through},
                  {"jobs", holder->toJson(target ? target->ns + "/" + target->name : "")}};
      out << result.dump(2) << "\n";
      return 0;
    }
    if (!target) {
      streamAllStates(*journal, through, out);
      return 0;
    }
    const std::string key = target->ns + "/" + target->name;
    out << json{{"at_seq", through}, {"jobs", jobStateThrough(*journal, key, through)}}.dump(2)
        << "\n";
    return 0;
  });
}

int exportJsonl(const std::string& dir, const std::optional<Position>& since, std::ostream& out) {
  return guarded(out, [&] {
    auto journal = openReadOnly(dir);
    uint64_t from = since && since->seq ? *since->seq : 0;
    Progress progress(journal->latestSeq() - std::max(from, journal->firstSeq()) + 1);
    journal->scan(from, [&](const wal::Record& r) {
      progress.tick();
      if (since && since->timeMs && r.timeMs < *since->timeMs) return true;
      json j = events::recordToJson(r);
      j["schema"] = "rayjournal.export.v1";
      j["time"] = toRfc3339(r.timeMs);
      out << j.dump() << "\n";
      return true;
    });
    return 0;
  });
}

}  // namespace rayjournal::replay
