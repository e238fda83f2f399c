// The API server's JSON bytes to a document, with simdjson: its parser finds the structure of
// the bytes at gigabytes a second, and the document is then built from that index in one walk,
// leaving out the subtrees nobody reads (each API object's metadata.managedFields, often half
// its bytes). nlohmann's own parser lexes character by character and builds every member first.
// The document is the one nlohmann::json::parse would give, less the members left out: the
// same types (a non-negative integer unsigned, as nlohmann gives it), the last of a repeated key
// winning. Bytes simdjson refuses are handed to nlohmann's parser, so what is refused, and what
// nlohmann alone accepts (an integer past 64 bits, read as a double), are as they were.
// Pure: no I/O. Thread-safe: each thread keeps its own parser, sized to the largest document it
// parsed up to kKeptParserBytes (simdjson's index takes about 15 bytes per byte parsed, so a
// kept parser holds at most ~1 MB); a larger document (a relist) gets a parser of its own,
// freed at once.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace rayjournal::model {

// What the API server sent, and so which members are API objects whose managedFields go.
enum class ApiShape {
  Object,      // one object (a GET, or the answer of a write): its metadata.managedFields
  List,        // {items: [...]}: the list's and each item's
  WatchEvent,  // {type, object}: the event's object's
  Plain,       // nothing left out
};

inline constexpr size_t kKeptParserBytes = size_t{64} << 10;

// The document, or a discarded value (is_discarded()) when the bytes are not JSON, as
// nlohmann::json::parse(bytes, nullptr, false) gives.
nlohmann::json parseApiJson(std::string_view bytes, ApiShape shape);

// The simdjson path alone: false, and `out` untouched, when simdjson refuses the bytes.
bool buildApiJson(std::string_view bytes, ApiShape shape, nlohmann::json& out);

// An API object split for a cache that keeps its objects encoded, from one parse and one walk:
// the handlers and callers get its head, the cache its encoding, and no document of its spec
// (most of its bytes) is ever built.
struct SplitObject {
  nlohmann::json head;           // the object less its spec, as parseApiJson builds it
  std::vector<uint8_t> encoded;  // the whole object as parseApiJson builds it, as CBOR
};
struct SplitWatchEvent {
  std::string type;  // ADDED, MODIFIED or DELETED
  SplitObject object;
};

// The object gets `kind` as its kind in both parts. false, and `out` unspecified, when simdjson
// refuses the bytes or they are not an object with a metadata object: the caller then parses
// them as before.
bool splitApiObject(std::string_view bytes, std::string_view kind, SplitObject& out);
// The same for a watch event's object; false also for an event that is not ADDED, MODIFIED or
// DELETED (BOOKMARK and ERROR events, and what is malformed, take the caller's whole path).
bool splitWatchEvent(std::string_view bytes, std::string_view kind, SplitWatchEvent& out);

}  // namespace rayjournal::model
