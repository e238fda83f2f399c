// The commands of rayjournal-replay. Each reads the journal read-only (RocksDB read-only open,
// so it works beside a running operator), streams records, prints to the given stream, and
// returns the process exit code: 0 ok, 1 verify failed or drift found, 2 usage, 3 cannot open
// or corrupt.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "LiveSources.h"

namespace rayjournal::replay {

struct Target {
  std::string ns;
  std::string name;
  std::string kind = "RayJob";
};
// "ns/name" or "name" (namespace default), optionally prefixed with the kind as kubectl writes
// it ("raycluster/ns/name", "rayjob/ns/name"); nullopt when malformed.
std::optional<Target> parseTarget(const std::string& text);

struct Position {  // --at / --since: a seq, an RFC 3339 time, or a duration ago ("90s", "2h")
  std::optional<uint64_t> seq;
  std::optional<int64_t> timeMs;
};
std::optional<Position> parsePosition(const std::string& text);

// -o text (for people) or json (one JSON document; timeline and export: JSON lines).
enum class Output { Text, Json };

// What `list` keeps (every field optional): runs of a namespace, with a deployment status or a
// reason among a comma-separated list ("none" for none yet), with a record at or after `since`,
// and only the deleted ones.
struct ListFilter {
  std::string ns, status, reason;
  std::optional<Position> since;
  bool deletedOnly = false;
};
// Every RayJob run in the journal (a uid: a RayJob deleted and created again under its name is
// two runs), deleted ones included: its last written status, attempts, pending intents, last
// error and when it was deleted.
int list(const std::string& journalDir, const ListFilter& filter, Output output,
         std::ostream& out);

// The history UI (pages and JSON API, docs/history-ui.md) over the journal, on address
// ("host:port"; port 0 picks one), following new records, until SIGINT or SIGTERM.
int serve(const std::string& journalDir, const std::string& address, std::ostream& out);

int summary(const std::string& journalDir, Output output, std::ostream& out);
// follow: then the records the operator journals from now on, until the RayJob is deleted.
int timeline(const std::string& journalDir, const Target& target, bool json, bool follow,
             std::ostream& out);
// The whole journal's last `limit` records as one page, a lane per RayJob and RayCluster.
int reportHtml(const std::string& journalDir, const std::string& htmlFile, size_t limit,
               std::ostream& out);
// The same records as one self-contained HTML page written to htmlFile (TimelineHtml.h).
int timelineHtml(const std::string& journalDir, const Target& target, const std::string& htmlFile,
                 std::ostream& out);
int verify(const std::string& journalDir, Output output, std::ostream& out);
// Rebuilds the per-object index from the records; opens the journal writable, so the operator
// must be stopped (a running one holds the lock and the error says so).
int reindex(const std::string& journalDir, Output output, std::ostream& out);
int state(const std::string& journalDir, const std::optional<Target>& target,
          const std::optional<Position>& at, std::ostream& out);
int exportJsonl(const std::string& journalDir, const std::optional<Position>& since,
                std::ostream& out);
// Against a live cluster, or the embedded store when sources.clusterDir is set. Exit 1 when
// problems (or drift) are found, 2 when a source cannot be read (never an all-clear then).
int diagnose(const std::string& journalDir, const Target& target, const LiveOptions& sources,
             Output output, std::ostream& out);
int diffAgainstKube(const std::string& journalDir, const LiveOptions& sources, Output output,
                    std::ostream& out);

}  // namespace rayjournal::replay
