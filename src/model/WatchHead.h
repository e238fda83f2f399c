// What the controllers read of a watch event before they need the whole object: the event type
// and the object's identity, owners, labels and phase. Two decoders give the same WatchHead:
// from a parsed document (today's path: one nlohmann DOM per event), and straight from the
// event's bytes with nlohmann's SAX interface, building no document. `rayjournal-bench decode`
// times both, and simdjson's On-Demand API, on a recorded watch stream (the decoding choice of
// lean, #36). Pure: no I/O; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rayjournal::model {

struct OwnerHead {
  std::string kind, name, uid;
  bool controller = false;
  bool operator==(const OwnerHead&) const = default;
};

struct ObjectHead {
  std::string kind, name, ns, uid, resourceVersion, deletionTimestamp;
  int64_t generation = 0;
  std::vector<std::pair<std::string, std::string>> labels;  // in the document's order
  std::vector<OwnerHead> owners;
  std::string phase;  // status.phase, when it is a string
  bool operator==(const ObjectHead&) const = default;
};

struct WatchHead {
  std::string type;  // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
  ObjectHead object;
  bool operator==(const WatchHead&) const = default;
};

// Nesting deeper than this is refused by the byte decoder (a hostile server cannot make it
// recurse or allocate without bound; the API server's objects nest about 15 deep).
inline constexpr int kMaxWatchHeadDepth = 64;

// From a parsed watch event {"type", "object"}. Members of another type than expected are left
// empty, as the JSON accessors do.
WatchHead watchHeadOf(const nlohmann::json& event);

// From the event's bytes, without building a document. False (and `error` says where) when the
// bytes are not one JSON object or nest deeper than kMaxWatchHeadDepth.
bool decodeWatchHead(std::string_view line, WatchHead& out, std::string* error = nullptr);

}  // namespace rayjournal::model
