// Hand-made record bodies for tests: a JSON map as the CBOR bytes a journal stores, so tests can
// write histories (also malformed ones) the way an older or newer writer might have.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rayjournal::testing {

inline std::string cbor(const nlohmann::json& map) {
  std::vector<uint8_t> bytes = nlohmann::json::to_cbor(map);
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace rayjournal::testing
