// YAML (as users write Kubernetes manifests) to JSON documents. Pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rayjournal {

// Every document of a multi-document YAML text. Throws std::invalid_argument with the YAML
// parser's position on malformed input.
std::vector<nlohmann::json> parseYamlDocuments(const std::string& text);
nlohmann::json parseYaml(const std::string& text);

}  // namespace rayjournal
