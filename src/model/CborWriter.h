// CBOR (RFC 8949) of JSON values as simdjson's parser found them, written straight into bytes
// with no document between: what nlohmann::json::from_cbor reads back as the document
// parseApiJson builds of the same JSON.
// - An integer is major type 0 (non-negative) or 1 (negative) in its shortest form, so a
//   non-negative one reads back unsigned, as nlohmann's parser gives it; every other number is a
//   double (0xfb).
// - Strings, arrays and maps have definite lengths. A map's members stay in the order they came:
//   from_cbor keeps the last of a repeated key, as the document does.
// Internal to model (its header needs simdjson's). Pure, no I/O; one writer per thread.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string_view>
#include <vector>

namespace rayjournal::model {

class CborWriter {
 public:
  enum class Major : uint8_t { Unsigned = 0, Negative = 1, Text = 3, Array = 4, Map = 5 };

  // `expected`: the bytes to reserve at once (the JSON's size is a fair bound).
  explicit CborWriter(size_t expected = 0) { out_.reserve(expected); }

  // The head of an item: its major type and its argument (a value, a length or a count).
  void head(Major major, uint64_t argument);
  void text(std::string_view s);
  // A whole value, as it is (nothing left out).
  void value(simdjson::dom::element e);
  // The bytes written so far, holding no spare capacity; the writer is empty after.
  std::vector<uint8_t> take();

 private:
  std::vector<uint8_t> out_;
};

}  // namespace rayjournal::model
