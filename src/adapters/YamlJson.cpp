#include "adapters/YamlJson.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <optional>
#include <stdexcept>

namespace rayjournal {
namespace {

bool isOneOf(const std::string& s, std::initializer_list<const char*> words) {
  for (const char* w : words)
    if (s == w) return true;
  return false;
}

// Go's strconv.ParseInt(s, 0, 64) after go-yaml removed the underscores: a sign, then decimal,
// 0x hex, 0o or leading-0 octal, or 0b binary.
std::optional<long long> goInteger(std::string s) {
  std::erase(s, '_');
  bool negative = !s.empty() && s[0] == '-';
  std::string digits = !s.empty() && (s[0] == '-' || s[0] == '+') ? s.substr(1) : s;
  int base = 10;
  if (digits.size() > 1 && digits[0] == '0') {
    char p = char(std::tolower(static_cast<unsigned char>(digits[1])));
    base = p == 'x' ? 16 : p == 'b' ? 2 : 8;
    digits = digits.substr(p == 'x' || p == 'b' || p == 'o' ? 2 : 1);
  }
  if (digits.empty() || !std::isalnum(static_cast<unsigned char>(digits[0]))) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long long value = std::strtoll(digits.c_str(), &end, base);
  if (*end != '\0' || errno == ERANGE) return std::nullopt;
  return negative ? -value : value;
}

// A plain scalar resolved as go-yaml v2 (YAML 1.1) does, which kubectl and KubeRay use: yes/no,
// on/off and y/n are booleans, Null and NULL are null, 0x1F and 0755 are integers.
nlohmann::json scalar(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;  // quoted: always a string
  if (isOneOf(s, {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"}))
    return true;
  if (isOneOf(s, {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"}))
    return false;
  if (isOneOf(s, {"", "~", "null", "Null", "NULL"})) return nullptr;
  if (auto i = goInteger(s)) return *i;
  if (isOneOf(s, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"})) return s;  // JSON has none
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (!s.empty() && *end == '\0' && !std::isalpha(static_cast<unsigned char>(s[0]))) return d;
  return s;
}

// A map key as sigs.k8s.io/yaml writes it into JSON: a key that YAML 1.1 reads as a boolean or
// a number becomes that value's text ("on:" is the key "true").
std::string key(const YAML::Node& node) {
  nlohmann::json k = node.IsScalar() ? scalar(node) : nlohmann::json(node.as<std::string>());
  if (k.is_string()) return k.get<std::string>();
  if (k.is_null()) return "null";
  return k.dump();
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
        out[key(kv.first)] = convert(kv.second, budget, depth + 1);
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
