#include "operator/OperatorConfig.h"

#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "adapters/YamlJson.h"
#include "model/Syntax.h"

namespace rayjournal::operator_ {
namespace {

using nlohmann::json;

// A refused field: the message names it (the caller adds the file).
struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void refuse(const std::string& field, const std::string& why) {
  throw ConfigError(field + ": " + why);
}

std::string typeName(const json& v) {
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_array()) return "a list";
  if (v.is_object()) return "a mapping";
  return "null";
}

std::string stringField(const json& v, const std::string& field) {
  if (!v.is_string()) refuse(field, "must be a string, not " + typeName(v));
  return v.get<std::string>();
}

bool boolField(const json& v, const std::string& field) {
  if (!v.is_boolean()) refuse(field, "must be true or false, not " + typeName(v));
  return v.get<bool>();
}

int64_t intField(const json& v, const std::string& field, int64_t min, int64_t max) {
  if (!v.is_number_integer()) refuse(field, "must be an integer, not " + typeName(v));
  int64_t n = v.get<int64_t>();
  if (n < min || n > max)
    refuse(field, std::to_string(n) + " is outside " + std::to_string(min) + ".." + std::to_string(max));
  return n;
}

std::string encoderField(const json& v, const std::string& field) {
  std::string encoder = stringField(v, field);
  if (encoder != "json" && encoder != "console")
    refuse(field, "\"" + encoder + "\" is not an encoder (json or console)");
  return encoder;
}

// apimachinery's IsQualifiedName: an optional DNS subdomain prefix and '/', then a name part
// of at most 63 characters.
bool isQualifiedName(const std::string& key) {
  size_t slash = key.find('/');
  std::string name = slash == std::string::npos ? key : key.substr(slash + 1);
  if (slash != std::string::npos) {
    std::string prefix = key.substr(0, slash);
    if (prefix.empty() || prefix.size() > 253 || !model::isDns1123Subdomain(prefix)) return false;
  }
  return !name.empty() && name.size() <= 63 && model::isQualifiedNamePart(name);
}

std::map<std::string, std::string, std::less<>> stringMap(const json& v, const std::string& field,
                                                          bool labelValues) {
  if (!v.is_object()) refuse(field, "must be a mapping of strings, not " + typeName(v));
  std::map<std::string, std::string, std::less<>> out;
  for (const auto& [key, value] : v.items()) {
    std::string at = field + "[\"" + key + "\"]";
    if (!isQualifiedName(key)) refuse(at, "the key is not a qualified name (prefix/name)");
    std::string text = stringField(value, at);
    if (labelValues && (text.size() > 63 || !model::isLabelValue(text)))
      refuse(at, "\"" + text + "\" is not a label value");
    out.emplace(key, std::move(text));
  }
  return out;
}

// corev1.Container as the API server would refuse it in every Pod: a DNS-1123 name, unique
// in the list, and an image.
model::Document sidecars(const json& v, const std::string& field) {
  if (!v.is_array()) refuse(field, "must be a list of containers, not " + typeName(v));
  std::set<std::string> names;
  for (size_t i = 0; i < v.size(); ++i) {
    std::string at = field + "[" + std::to_string(i) + "]";
    if (!v[i].is_object()) refuse(at, "must be a container, not " + typeName(v[i]));
    if (!v[i].contains("name")) refuse(at, "a container needs a name");
    std::string name = stringField(v[i]["name"], at + ".name");
    if (name.size() > 63 || !model::isDns1123Label(name))
      refuse(at + ".name", "\"" + name + "\" is not a DNS-1123 label");
    if (!names.insert(name).second) refuse(at + ".name", "\"" + name + "\" is named twice");
    if (!v[i].contains("image") || stringField(v[i]["image"], at + ".image").empty())
      refuse(at, "container " + name + " needs an image");
  }
  return v.empty() ? model::Document() : model::Document(v);
}

model::Document containerEnvs(const json& v, const std::string& field) {
  if (!v.is_array()) refuse(field, "must be a list of environment variables, not " + typeName(v));
  for (size_t i = 0; i < v.size(); ++i) {
    std::string at = field + "[" + std::to_string(i) + "]";
    if (!v[i].is_object()) refuse(at, "must be an environment variable, not " + typeName(v[i]));
    if (!v[i].contains("name") || stringField(v[i]["name"], at + ".name").empty())
      refuse(at, "an environment variable needs a name");
    if (v[i].contains("value")) stringField(v[i]["value"], at + ".value");
    if (v[i].contains("valueFrom") && !v[i]["valueFrom"].is_object())
      refuse(at + ".valueFrom", "must be a mapping, not " + typeName(v[i]["valueFrom"]));
  }
  return v.empty() ? model::Document() : model::Document(v);
}

void readServingFields(OperatorConfig& c, const std::string& key, const json& v) {
  if (key == "metricsAddr") c.metricsAddr = stringField(v, key);
  else if (key == "probeAddr") c.probeAddr = stringField(v, key);
  else if (key == "enableLeaderElection") c.enableLeaderElection = boolField(v, key);
  else if (key == "leaderElectionNamespace") c.leaderElectionNamespace = stringField(v, key);
  else if (key == "reconcileConcurrency") c.reconcileConcurrency = intField(v, key, 0, 256);
  else if (key == "watchNamespace") c.watchNamespace = stringField(v, key);
  else if (key == "logFile") c.logFile = stringField(v, key);
  else if (key == "logFileEncoder") c.logFileEncoder = encoderField(v, key);
  else if (key == "logStdoutEncoder") c.logStdoutEncoder = encoderField(v, key);
  else if (key == "useKubernetesProxy") c.useKubernetesProxy = boolField(v, key);
  else if (key == "enableMetrics") c.enableMetrics = boolField(v, key);
  else if (key == "burst") c.burst = intField(v, key, 0, 1'000'000);
  else if (key == "qps") {
    if (!v.is_number()) refuse(key, "must be a number, not " + typeName(v));
    c.qps = v.get<double>();
  } else c.warnings.push_back(key + " is not a field of KubeRay's Configuration; ignored");
}

void readField(OperatorConfig& c, const std::string& key, const json& v) {
  controller::PodDefaults& pods = c.podDefaults;
  if (key == "apiVersion" || key == "kind") return;
  if (key == "batchScheduler") c.batchScheduler = stringField(v, key);
  else if (key == "enableBatchScheduler") c.enableBatchScheduler = boolField(v, key);
  else if (key == "deleteRayJobAfterJobFinishes") c.deleteRayJobAfterJobFinishes = boolField(v, key);
  else if (key == "headSidecarContainers") pods.headSidecars = sidecars(v, key);
  else if (key == "workerSidecarContainers") pods.workerSidecars = sidecars(v, key);
  else if (key == "defaultContainerEnvs") pods.containerEnvs = containerEnvs(v, key);
  else if (key == "defaultPodLabels") pods.labels = stringMap(v, key, true);
  else if (key == "defaultPodAnnotations") pods.annotations = stringMap(v, key, false);
  else readServingFields(c, key, v);
}

OperatorConfig readConfiguration(const json& doc) {
  if (!doc.is_object()) refuse("the document", "must be a mapping, not " + typeName(doc));
  std::string apiVersion = doc.contains("apiVersion") ? stringField(doc["apiVersion"], "apiVersion") : "";
  std::string kind = doc.contains("kind") ? stringField(doc["kind"], "kind") : "";
  if (apiVersion != "config.ray.io/v1alpha1" || kind != "Configuration")
    refuse("apiVersion/kind", "\"" + apiVersion + "\"/\"" + kind +
                                  "\" is not KubeRay's config.ray.io/v1alpha1 Configuration");
  OperatorConfig c;
  for (const auto& [key, value] : doc.items())
    if (!value.is_null()) readField(c, key, value);
  if (c.probeAddr)
    c.warnings.push_back("probeAddr " + *c.probeAddr + ": rayjournal serves /healthz and /readyz "
                         "on the metrics address (metricsAddr); ignored");
  return c;
}

}  // namespace

OperatorConfigParse parseOperatorConfig(const std::string& text, const std::string& source) {
  OperatorConfigParse out;
  try {
    std::vector<json> docs = parseYamlDocuments(text);
    if (docs.size() != 1) {
      out.error = source + ": holds " + std::to_string(docs.size()) + " YAML documents, not one";
      return out;
    }
    out.config = readConfiguration(docs[0]);
  } catch (const ConfigError& e) {
    out.error = source + ": " + e.what();
  } catch (const std::invalid_argument& e) {
    out.error = source + ": not YAML: " + e.what();
  }
  return out;
}

}  // namespace rayjournal::operator_
