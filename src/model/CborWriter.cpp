#include "model/CborWriter.h"

#include <bit>
#include <cstring>

namespace rayjournal::model {
namespace dom = simdjson::dom;

namespace {

constexpr uint8_t kFalse = 0xf4, kTrue = 0xf5, kNull = 0xf6, kDouble = 0xfb;

void bigEndian(std::vector<uint8_t>& out, uint64_t v, int bytes) {
  for (int shift = (bytes - 1) * 8; shift >= 0; shift -= 8) out.push_back(uint8_t(v >> shift));
}

// simdjson saturates a count at 2^24 - 1: count such a container's items one by one.
template <typename Container>
uint64_t countOf(Container c) {
  constexpr size_t kSaturated = 0xFFFFFF;
  uint64_t n = c.size();
  if (n < kSaturated) return n;
  n = 0;
  for (auto it = c.begin(); it != c.end(); ++it) ++n;
  return n;
}

}  // namespace

void CborWriter::head(Major major, uint64_t argument) {
  const uint8_t type = uint8_t(uint8_t(major) << 5);
  if (argument < 24) {
    out_.push_back(type | uint8_t(argument));
  } else if (argument <= 0xff) {
    out_.push_back(type | 24);
    bigEndian(out_, argument, 1);
  } else if (argument <= 0xffff) {
    out_.push_back(type | 25);
    bigEndian(out_, argument, 2);
  } else if (argument <= 0xffffffff) {
    out_.push_back(type | 26);
    bigEndian(out_, argument, 4);
  } else {
    out_.push_back(type | 27);
    bigEndian(out_, argument, 8);
  }
}

void CborWriter::text(std::string_view s) {
  head(Major::Text, s.size());
  out_.insert(out_.end(), s.begin(), s.end());
}

void CborWriter::value(dom::element e) {
  switch (e.type()) {
    case dom::element_type::OBJECT: {
      dom::object object = e.get_object().value_unsafe();
      head(Major::Map, countOf(object));
      for (dom::key_value_pair field : object) {
        text(field.key);
        value(field.value);
      }
      return;
    }
    case dom::element_type::ARRAY: {
      dom::array array = e.get_array().value_unsafe();
      head(Major::Array, countOf(array));
      for (dom::element item : array) value(item);
      return;
    }
    case dom::element_type::STRING:
      return text(e.get_string().value_unsafe());
    case dom::element_type::INT64: {
      const int64_t v = e.get_int64().value_unsafe();
      // -1 - v for a negative v, without overflow at INT64_MIN.
      return v >= 0 ? head(Major::Unsigned, uint64_t(v)) : head(Major::Negative, ~uint64_t(v));
    }
    case dom::element_type::UINT64:
      return head(Major::Unsigned, e.get_uint64().value_unsafe());
    case dom::element_type::DOUBLE:
      out_.push_back(kDouble);
      return bigEndian(out_, std::bit_cast<uint64_t>(e.get_double().value_unsafe()), 8);
    case dom::element_type::BOOL:
      return out_.push_back(e.get_bool().value_unsafe() ? kTrue : kFalse);
    case dom::element_type::NULL_VALUE:
      return out_.push_back(kNull);
  }
}

std::vector<uint8_t> CborWriter::take() {
  std::vector<uint8_t> bytes = std::move(out_);
  out_.clear();
  bytes.shrink_to_fit();
  return bytes;
}

}  // namespace rayjournal::model
