#include "adapters/YamlJson.h"

#include <yaml-cpp/yaml.h>

#include <stdexcept>

namespace rayjournal {
namespace {

nlohmann::json scalar(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;  // quoted: always a string
  if (s == "true" || s == "True") return true;
  if (s == "false" || s == "False") return false;
  if (s == "null" || s == "~") return nullptr;
  char* end = nullptr;
  long long i = std::strtoll(s.c_str(), &end, 10);
  if (!s.empty() && *end == '\0') return i;
  double d = std::strtod(s.c_str(), &end);
  if (!s.empty() && *end == '\0') return d;
  return s;
}

// yaml-cpp keeps an alias as a shared node, so a few hundred bytes of nested aliases (a
// "billion laughs" document) expand to billions of nodes only here: count what is produced and
// stop, as the API server's YAML decoder does for excessive aliasing.
struct Budget {
  size_t nodes = 0;
  void spend(size_t depth) {
    if (++nodes > kMaxYamlNodes)
      throw std::invalid_argument("invalid YAML: more than " + std::to_string(kMaxYamlNodes) +
                                  " values in one document (excessive aliasing?)");
    if (depth > kMaxYamlDepth)
      throw std::invalid_argument("invalid YAML: nested deeper than " +
                                  std::to_string(kMaxYamlDepth) + " levels");
  }
};

nlohmann::json convert(const YAML::Node& node, Budget& budget, size_t depth) {
  budget.spend(depth);
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& kv : node)
        out[kv.first.as<std::string>()] = convert(kv.second, budget, depth + 1);
      return out;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : node) out.push_back(convert(item, budget, depth + 1));
      return out;
    }
    case YAML::NodeType::Scalar:
      return scalar(node);
    default:
      return nullptr;
  }
}

}  // namespace

std::vector<nlohmann::json> parseYamlDocuments(const std::string& text) {
  std::vector<nlohmann::json> out;
  try {
    for (const auto& doc : YAML::LoadAll(text)) {
      Budget budget;
      if (!doc.IsNull()) out.push_back(convert(doc, budget, 0));
    }
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument(std::string("invalid YAML: ") + e.what());
  }
  return out;
}

nlohmann::json parseYaml(const std::string& text) {
  auto docs = parseYamlDocuments(text);
  return docs.empty() ? nlohmann::json::object() : docs.front();
}

}  // namespace rayjournal
