#include "model/TokenAuth.h"

#include <cctype>

#include "model/JsonAccess.h"

namespace rayjournal::model {
namespace {

using nlohmann::json;

bool hasEnv(const json& env, const std::string& name) {
  for (const auto& e : env)
    if (stringAt(e, "name") == name) return true;
  return false;
}

std::string base64Decoded(const std::string& text) {
  static const std::string alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    if (c == '=') break;
    auto at = alphabet.find(c);
    if (at == std::string::npos) continue;  // line breaks
    bits = (bits << 6) | uint32_t(at);
    if ((count += 6) >= 8) out += char((bits >> (count -= 8)) & 0xff);
  }
  return out;
}

}  // namespace

std::string checkName(std::string name) {
  constexpr size_t kMax = 50;
  if (name.size() > kMax) name = name.substr(name.size() - kMax);
  if (!name.empty() && (std::isdigit(static_cast<unsigned char>(name[0])) ||
                        std::ispunct(static_cast<unsigned char>(name[0]))))
    name[0] = 'r';
  return name;
}

std::string tokenAuthSecretName(const json& clusterSpec, const std::string& cluster) {
  const json& auth = objectAt(clusterSpec, "authOptions");
  if (stringAt(auth, "mode") != "token") return "";
  if (memberAt(auth, "enableK8sTokenAuth").is_boolean() && auth["enableK8sTokenAuth"]) return "";
  const std::string& own = stringAt(auth, "secretName");
  return own.empty() ? checkName(cluster) : own;
}

bool operatorCreatesTokenSecret(const json& clusterSpec) {
  return stringAt(objectAt(clusterSpec, "authOptions"), "secretName").empty();
}

void addTokenAuthEnv(json& container, const std::string& secretName) {
  json env = memberAt(container, "env").is_array() ? container["env"] : json::array();
  if (!hasEnv(env, "RAY_AUTH_MODE")) env.push_back({{"name", "RAY_AUTH_MODE"}, {"value", "token"}});
  if (!hasEnv(env, "RAY_AUTH_TOKEN"))
    env.push_back({{"name", "RAY_AUTH_TOKEN"},
                   {"valueFrom", {{"secretKeyRef", {{"name", secretName}, {"key", kAuthTokenKey}}}}}});
  container["env"] = std::move(env);
}

std::string tokenOfSecret(const json& secret) {
  const json& data = memberAt(objectAt(secret, "data"), kAuthTokenKey);
  if (data.is_string()) return base64Decoded(data.get<std::string>());
  return stringAt(objectAt(secret, "stringData"), kAuthTokenKey);
}

}  // namespace rayjournal::model
