#include "controller/FieldSupport.h"

#include "controller/JsonAccess.h"

namespace rayjournal::controller {
namespace {

using nlohmann::json;
constexpr Support kDone = Support::Implemented;
constexpr Support kRay = Support::ReadByRay;
constexpr Support kIgnored = Support::Ignored;

const std::vector<FieldRule> kClusterRules{
    {"authOptions", kDone, ""},
    {"autoscalerOptions", kDone, ""},
    {"autoscalerOptions.idleTimeoutSeconds", kRay, ""},
    {"autoscalerOptions.upscalingMode", kRay, ""},
    {"enableInTreeAutoscaling", kDone, ""},
    {"gcsFaultToleranceOptions", kDone, ""},
    {"headGroupSpec.enableIngress", kIgnored,
     "no Ingress is created for the head's dashboard; expose the head Service yourself"},
    {"headGroupSpec.ingressOptions", kIgnored, "no Ingress is created (see enableIngress)"},
    {"headGroupSpec.headService", kDone, ""},
    {"headGroupSpec.labels", kDone, ""},
    {"headGroupSpec.rayStartParams", kDone, ""},
    {"headGroupSpec.resources", kDone, ""},
    {"headGroupSpec.serviceType", kDone, ""},
    {"headGroupSpec.template", kDone, ""},
    {"headServiceAnnotations", kIgnored,
     "the head Service carries only headService.metadata.annotations"},
    {"historyServerOptions", kIgnored,
     "no history-server collector sidecar is added to the Pods; Ray's logs stay in the Pods"},
    {"managedBy", kDone, ""},
    {"networkPolicy", kIgnored, "no NetworkPolicy is created; the Pods accept any traffic the namespace allows"},
    {"rayVersion", kDone, ""},
    {"suspend", kDone, ""},
    {"tlsOptions", kIgnored, "no mTLS certificates are issued; Ray's traffic is not encrypted"},
    {"upgradeStrategy", kIgnored,
     "Pods are not recreated when the template changes; delete them to pick up a new template"},
    {"workerGroupSpecs[].groupName", kDone, ""},
    {"workerGroupSpecs[].idleTimeoutSeconds", kRay, ""},
    {"workerGroupSpecs[].labels", kDone, ""},
    {"workerGroupSpecs[].maxReplicas", kDone, ""},
    {"workerGroupSpecs[].minReplicas", kDone, ""},
    {"workerGroupSpecs[].numOfHosts", kDone, ""},
    {"workerGroupSpecs[].priority", kRay, ""},
    {"workerGroupSpecs[].rayStartParams", kDone, ""},
    {"workerGroupSpecs[].replicas", kDone, ""},
    {"workerGroupSpecs[].resources", kDone, ""},
    {"workerGroupSpecs[].scaleStrategy", kDone, ""},
    {"workerGroupSpecs[].suspend", kDone, ""},
    {"workerGroupSpecs[].template", kDone, ""},
};

const std::vector<FieldRule> kJobRules{
    {"activeDeadlineSeconds", kDone, ""},
    {"backoffLimit", kDone, ""},
    {"clusterSelector", kDone, ""},
    {"deletionStrategy", kDone, ""},
    {"entrypoint", kDone, ""},
    {"entrypointNumCpus", kDone, ""},
    {"entrypointNumGpus", kDone, ""},
    {"entrypointResources", kDone, ""},
    {"jobId", kDone, ""},
    {"managedBy", kDone, ""},
    {"metadata", kDone, ""},
    {"preRunningDeadlineSeconds", kDone, ""},
    {"rayClusterSpec", kDone, ""},  // and below it, the RayCluster rules
    {"runtimeEnvYAML", kDone, ""},
    {"shutdownAfterJobFinishes", kDone, ""},
    {"submissionMode", kDone, ""},
    {"submitterConfig", kDone, ""},
    {"submitterPodTemplate", kDone, ""},
    {"suspend", kDone, ""},
    {"ttlSecondsAfterFinished", kDone, ""},
};

constexpr std::string_view kClusterSpecPrefix = "rayClusterSpec.";

// Rule paths are matched on whole keys: "suspend" covers "suspend" and "suspend.x", not "suspended".
bool covers(std::string_view rule, std::string_view path) {
  return path.substr(0, rule.size()) == rule &&
         (path.size() == rule.size() || path[rule.size()] == '.' || path[rule.size()] == '[');
}

const FieldRule* longestIn(const std::vector<FieldRule>& rules, std::string_view path) {
  const FieldRule* best = nullptr;
  for (const auto& r : rules)
    if (covers(r.path, path) && (!best || r.path.size() > best->path.size())) best = &r;
  return best;
}

bool setValue(const json& v) {
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_string() || v.is_object() || v.is_array()) return !v.empty();
  if (v.is_number()) return v != 0;
  return true;
}

// Whether the document sets the path ("a.b[].c": any element of a.b with c set).
bool sets(const json& node, std::string_view path) {
  if (path.empty()) return setValue(node);
  size_t end = path.find_first_of(".[");
  std::string key(path.substr(0, end));
  const json& child = memberAt(node, key.c_str());
  if (end == std::string_view::npos) return setValue(child);
  if (path[end] == '.') return sets(child, path.substr(end + 1));
  std::string_view rest = path.substr(std::min(path.size(), end + 3));  // past "[]."
  for (const auto& element : arrayAt(node, key.c_str()))
    if (sets(element, rest)) return true;
  return false;
}

void collectIgnored(const std::vector<FieldRule>& rules, const json& spec, const std::string& prefix,
                    std::vector<IgnoredField>& out) {
  for (const auto& r : rules)
    if (r.support == Support::Ignored && sets(spec, r.path))
      out.push_back({prefix + std::string(r.path), std::string(r.instead)});
}

}  // namespace

const std::vector<FieldRule>& rayClusterSpecRules() { return kClusterRules; }
const std::vector<FieldRule>& rayJobSpecRules() { return kJobRules; }

const FieldRule* ruleFor(std::string_view kind, std::string_view specPath) {
  if (kind == "RayCluster") return longestIn(kClusterRules, specPath);
  if (specPath.substr(0, kClusterSpecPrefix.size()) == kClusterSpecPrefix)
    if (const FieldRule* rule = longestIn(kClusterRules, specPath.substr(kClusterSpecPrefix.size())))
      return rule;
  return longestIn(kJobRules, specPath);
}

std::vector<IgnoredField> ignoredFieldsOf(std::string_view kind, const json& object) {
  std::vector<IgnoredField> out;
  const json& spec = objectAt(object, "spec");
  if (kind == "RayCluster") {
    collectIgnored(kClusterRules, spec, "spec.", out);
  } else {
    collectIgnored(kJobRules, spec, "spec.", out);
    collectIgnored(kClusterRules, objectAt(spec, "rayClusterSpec"), "spec.rayClusterSpec.", out);
  }
  return out;
}

}  // namespace rayjournal::controller
