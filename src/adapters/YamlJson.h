// YAML (as users write Kubernetes manifests) to JSON documents. Pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rayjournal {

// Limits per document, far above any real manifest (an API server takes at most 3 MiB).
inline constexpr size_t kMaxYamlNodes = 1'000'000;
inline constexpr size_t kMaxYamlDepth = 100;

// Every document of a multi-document YAML text. Throws std::invalid_argument with the YAML
// parser's position on malformed input, and when a document exceeds the limits above.
std::vector<nlohmann::json> parseYamlDocuments(const std::string& text);
nlohmann::json parseYaml(const std::string& text);

}  // namespace rayjournal
