#include "ReplayCommon.h"

#include <chrono>
#include <map>

#include "adapters/TimeFormat.h"
#include "events/JournalBodies.h"
#include "events/RecordJson.h"

namespace rayjournal::replay {

// The sources diagnose and diff read; ClusterDirError (exit 2) when one cannot be set up.
Sources sourcesOrThrow(const LiveOptions& options) {
  try {
    return openSources(options);
  } catch (const std::runtime_error& e) {
    throw ClusterDirError{e.what()};
  }
}

namespace {

std::unique_ptr<wal::Journal> openJournal(const std::string& dir, bool follow) {
  wal::JournalOptions options;
  options.readOnly = true;
  options.follow = follow;
  try {
    return wal::Journal::open(dir, options);
  } catch (const wal::JournalError& e) {
    throw OpenError{e.what()};
  }
}

}  // namespace

std::unique_ptr<wal::Journal> openReadOnly(const std::string& dir) {
  return openJournal(dir, false);
}

std::unique_ptr<wal::Journal> openFollowing(const std::string& dir) {
  return openJournal(dir, true);
}

std::string seconds(int64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%+.3fs", double(ms) / 1000.0);
  return buf;
}

// Replays the projection through `through` (inclusive), from the newest checkpoint at or below.
std::unique_ptr<projection::JobProjection> projectionAt(wal::Journal& journal, uint64_t through) {
  auto holder = std::make_unique<projection::JobProjection>();
  projection::JobProjection& p = *holder;
  uint64_t from = journal.firstSeq();
  for (uint64_t seq : journal.checkpointSeqs()) {
    auto cp = journal.checkpointAt(seq);
    if (cp->coversThrough <= through && cp->coversThrough + 1 > from) {
      p.restore(cp->state);
      from = cp->coversThrough + 1;
    }
  }
  journal.scan(from, [&](const wal::Record& r) {
    if (r.seq > through) return false;
    if (r.type != wal::RecordType::Checkpoint) p.apply(r);
    return true;
  });
  return holder;
}

uint64_t seqAt(wal::Journal& journal, const Position& at) {
  if (at.seq) return *at.seq;
  uint64_t last = 0;
  journal.scan(0, [&](const wal::Record& r) {
    if (r.timeMs > *at.timeMs) return false;
    last = r.seq;
    return true;
  });
  return last;
}

std::string describe(const wal::Record& r) {
  return events::recordText(r, events::bodyToJson(r));
}

std::optional<Target> parseTarget(const std::string& input) {
  std::string text = input, kind = "RayJob";
  for (const auto& [prefix, k] : {std::pair{"raycluster/", "RayCluster"},
                                  {"rayclusters/", "RayCluster"}, {"rayjob/", "RayJob"},
                                  {"rayjobs/", "RayJob"}}) {
    if (text.rfind(prefix, 0) == 0) {
      text = text.substr(std::string(prefix).size());
      kind = k;
    }
  }
  auto slash = text.find('/');
  Target t{slash == std::string::npos ? "default" : text.substr(0, slash),
           slash == std::string::npos ? text : text.substr(slash + 1)};
  if (t.ns.empty() || t.name.empty() || t.name.find('/') != std::string::npos) return std::nullopt;
  t.kind = kind;
  return t;
}

std::optional<Position> parsePosition(const std::string& text) {
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos)
    return Position{std::stoull(text), std::nullopt};
  if (auto t = parseRfc3339(text)) return Position{std::nullopt, *t};
  // A duration before now, as kubectl's --since: "90s", "15m", "2h", "7d".
  static const std::map<char, int64_t> unitMs = {
      {'s', 1000}, {'m', 60000}, {'h', 3600000}, {'d', 86400000}};
  auto unit = text.empty() ? unitMs.end() : unitMs.find(text.back());
  std::string digits = text.substr(0, text.empty() ? 0 : text.size() - 1);
  if (unit == unitMs.end() || digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  int64_t nowMs = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  return Position{std::nullopt, nowMs - std::stoll(digits) * unit->second};
}

}  // namespace rayjournal::replay
