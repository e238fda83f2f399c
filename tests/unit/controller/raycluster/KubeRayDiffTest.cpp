// The differential check against KubeRay's own code: for every case in tests/kuberay-diff/cases,
// the Pods KubeRay v1.7.0's reconciler builds (golden/, written by KubeRay's buildHeadPod and
// buildWorkerPod through tests/kuberay-diff/generate.sh) and the Pods rayjournal builds from the
// same RayCluster and configuration must agree field by field, but for the differences listed
// below, each with its reason. A new difference is a Pod a KubeRay user would see change when
// moving to rayjournal.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "adapters/YamlJson.h"
#include "controller/Volcano.h"
#include "controller/YuniKorn.h"
#include "controller/raycluster/RayClusterBuild.h"
#include "operator/OperatorConfig.h"

namespace rayjournal::controller {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const fs::path kDiffDir = fs::path(RAYJOURNAL_SOURCE_DIR) / "tests/kuberay-diff";

std::string diffFileText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Go's encoding writes empty structs ("resources": {}) and rayjournal omits them; neither
// reaches the API server as a value.
json withoutEmpty(const json& v) {
  if (v.is_object()) {
    json out = json::object();
    for (const auto& [k, e] : v.items()) {
      json kept = withoutEmpty(e);
      if (!kept.is_null() && !(kept.is_object() && kept.empty()) && !(kept.is_array() && kept.empty()))
        out[k] = std::move(kept);
    }
    return out;
  }
  if (v.is_array()) {
    json out = json::array();
    for (const auto& e : v) out.push_back(withoutEmpty(e));
    return out;
  }
  return v;
}

void diffInto(const json& kuberay, const json& ours, const std::string& at, std::vector<std::string>& out) {
  if (kuberay.is_object() && ours.is_object()) {
    for (const auto& [k, v] : kuberay.items())
      diffInto(v, ours.contains(k) ? ours[k] : json(), at + "." + k, out);
    for (const auto& [k, v] : ours.items())
      if (!kuberay.contains(k)) diffInto(json(), v, at + "." + k, out);
    return;
  }
  if (kuberay.is_array() && ours.is_array() && kuberay.size() == ours.size()) {
    for (size_t i = 0; i < kuberay.size(); ++i) diffInto(kuberay[i], ours[i], at + "[" + std::to_string(i) + "]", out);
    return;
  }
  if (kuberay != ours) out.push_back(at + ": KubeRay " + kuberay.dump() + ", rayjournal " + ours.dump());
}

std::shared_ptr<const PodDefaults> diffPodDefaults(const json& configuration) {
  if (configuration.is_null()) return nullptr;
  json file = configuration;
  file["apiVersion"] = "config.ray.io/v1alpha1";
  file["kind"] = "Configuration";
  auto parsed = operator_::parseOperatorConfig(file.dump(), "case configuration");
  EXPECT_EQ(parsed.error, "");
  return std::make_shared<const PodDefaults>(parsed.config.podDefaults);
}

struct DiffPods {
  json head;
  std::map<std::string, json> workers;
};

DiffPods rayjournalPods(const json& c) {
  ClusterContext context;
  context.injection.defaults = diffPodDefaults(c.value("configuration", json()));
  ClusterObserved o = clusterObserved(std::make_shared<const json>(c["cluster"]), std::vector<PodView>{}, nullptr, context);
  DiffPods pods{*headPodFor(o.cluster), {}};
  for (const WorkerGroupView& group : o.cluster.groups)
    pods.workers[group.name] = *workerPodFor(o.cluster, group, "worker", 0);
  return pods;
}

// Worker Pod names are random in KubeRay (utils.PodName with a random suffix).
json comparable(json pod, bool worker) {
  if (worker) pod["metadata"].erase("name");
  return withoutEmpty(pod);
}

// The differences rayjournal keeps on purpose, taken out of KubeRay's Pod before comparing.
json withoutDeliberateDifferences(json pod) {
  // rayjournal names every worker itself, and journals the name before the create: a create
  // by generateName cannot be told apart from another after a crash (the exactly-once Pods).
  pod["metadata"].erase("generateName");
  // Ray's usage statistics are told "kuberay_version=v1.7.0" by KubeRay; rayjournal is not
  // KubeRay v1.7.0 and does not say it is (it keeps RAY_USAGE_STATS_KUBERAY_IN_USE).
  for (auto& container : pod["spec"]["containers"]) {
    json env = json::array();
    for (const auto& e : container.value("env", json::array()))
      if (e.value("name", "") != "RAY_USAGE_STATS_EXTRA_TAGS") env.push_back(e);
    container["env"] = std::move(env);
  }
  return pod;
}

std::vector<std::string> caseDifferences(const std::string& name) {
  json c = parseYaml(diffFileText(kDiffDir / "cases" / (name + ".yaml")));
  json golden = json::parse(diffFileText(kDiffDir / "golden" / (name + ".json")));
  DiffPods ours = rayjournalPods(c);
  std::vector<std::string> out;
  diffInto(comparable(withoutDeliberateDifferences(golden["head"]), false), comparable(ours.head, false),
           "head", out);
  for (const auto& [group, pod] : golden["workers"].items())
    diffInto(comparable(withoutDeliberateDifferences(pod), true), comparable(ours.workers[group], true),
             "workers." + group, out);
  return out;
}

std::vector<std::string> caseNames() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(kDiffDir / "cases"))
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(KubeRayDiffTest, EveryCaseHasAGoldenFileFromKubeRay) {
  ASSERT_GE(caseNames().size(), 5u);
  for (const std::string& name : caseNames())
    EXPECT_TRUE(fs::exists(kDiffDir / "golden" / (name + ".json")))
        << name << ": run bash tests/kuberay-diff/generate.sh";
}

TEST(KubeRayDiffTest, PodsMatchKubeRaysBuilders) {
  for (const std::string& name : caseNames()) {
    std::vector<std::string> differences = caseDifferences(name);
    std::string listed;
    for (const std::string& d : differences) listed += "\n  " + d;
    EXPECT_TRUE(differences.empty()) << name << ":" << listed;
  }
}

// Volcano: the PodGroup, the Pod fields and the cleanup, against KubeRay's volcano package.
// Go omits a zero minMember; rayjournal writes it. Both mean the same to Volcano.
json comparablePodGroup(json podGroup) {
  if (podGroup.is_object() && podGroup["spec"].value("minMember", -1) == 0) podGroup["spec"].erase("minMember");
  return withoutEmpty(podGroup);
}

json volcanoRun(const json& c) {
  const json& owner = c["object"];
  json out;
  const bool job = owner["kind"] == "RayJob";
  Gang gang = job ? rayJobGang(owner) : clusterGang(owner["spec"]);
  std::string error;
  json podGroup = *volcanoPodGroupFor(owner, gang, error);
  out["podGroup"] = podGroup;
  if (!job) {
    json pod = {{"metadata", json::object()}, {"spec", json::object()}};
    addVolcanoMetadata(owner, pod, "headgroup", true);
    out["headPod"] = pod["metadata"];
    out["headSchedulerName"] = pod["spec"]["schedulerName"];
    return out;
  }
  json cluster = {{"metadata", json::object()}};
  addVolcanoMetadata(owner, cluster, "", false);
  out["rayCluster"] = cluster["metadata"];
  json tmpl = {{"metadata", json::object()}, {"spec", json::object()}};
  addVolcanoMetadata(owner, tmpl, "submittergroup", true);
  out["submitterTemplate"] = tmpl["metadata"];
  out["submitterSchedulerName"] = tmpl["spec"]["schedulerName"];
  if (!owner.value("status", json::object()).value("rayClusterName", "").empty()) {
    const json* existing = c.contains("cluster") ? &c["cluster"] : nullptr;
    json after = podGroupWithGang(podGroup, leftoverGang(existing));
    out["podGroupAfterCleanup"] = after.is_null() ? podGroup : after;
  }
  return out;
}

std::vector<std::string> volcanoDifferences(const std::string& name) {
  json c = parseYaml(diffFileText(kDiffDir / "volcano" / (name + ".yaml")));
  json golden = json::parse(diffFileText(kDiffDir / "golden" / ("volcano-" + name + ".json")));
  json ours = volcanoRun(c);
  std::vector<std::string> out;
  for (const char* key : {"podGroup", "podGroupAfterCleanup"})
    if (golden.contains(key)) diffInto(comparablePodGroup(golden[key]), comparablePodGroup(ours.value(key, json())), key, out);
  for (const char* key : {"headPod", "rayCluster", "submitterTemplate", "headSchedulerName", "submitterSchedulerName"})
    if (golden.contains(key)) diffInto(withoutEmpty(golden[key]), withoutEmpty(ours.value(key, json())), key, out);
  EXPECT_EQ(golden.value("submissionError", ""), "") << name;
  return out;
}

TEST(KubeRayDiffTest, VolcanoMatchesKubeRaysScheduler) {
  size_t cases = 0;
  for (const auto& entry : fs::directory_iterator(kDiffDir / "volcano")) {
    if (entry.path().extension() != ".yaml") continue;
    ++cases;
    const std::string name = entry.path().stem();
    ASSERT_TRUE(fs::exists(kDiffDir / "golden" / ("volcano-" + name + ".json")))
        << name << ": run bash tests/kuberay-diff/generate.sh";
    std::vector<std::string> differences = volcanoDifferences(name);
    std::string listed;
    for (const std::string& d : differences) listed += "\n  " + d;
    EXPECT_TRUE(differences.empty()) << name << ":" << listed;
  }
  EXPECT_GE(cases, 5u);
}

// YuniKorn: the Pod fields, against KubeRay's yunikorn package. The task-groups annotation is
// compared as the JSON it is (Go writes an affinity's fields in its struct's order).
json yuniKornComparable(json meta) {
  json& annotations = meta["annotations"];
  if (annotations.contains("yunikorn.apache.org/task-groups"))
    annotations["yunikorn.apache.org/task-groups"] = json::parse(annotations["yunikorn.apache.org/task-groups"].get<std::string>());
  return withoutEmpty(meta);
}

json yuniKornRun(const json& owner) {
  json out;
  auto child = [&](const char* key, const std::string& group, bool podLike) {
    json object = {{"metadata", json::object()}, {"spec", json::object()}};
    addYuniKornMetadata(owner, object, group, podLike);
    out[key] = object["metadata"];
    return object["spec"].value("schedulerName", "");
  };
  if (owner["kind"] == "RayCluster") {
    out["headSchedulerName"] = child("headPod", "headgroup", true);
    return out;
  }
  child("rayCluster", "", false);
  out["submitterSchedulerName"] = child("submitterTemplate", "submittergroup", true);
  return out;
}

TEST(KubeRayDiffTest, YuniKornMatchesKubeRaysScheduler) {
  size_t cases = 0;
  for (const auto& entry : fs::directory_iterator(kDiffDir / "yunikorn")) {
    if (entry.path().extension() != ".yaml") continue;
    ++cases;
    const std::string name = entry.path().stem();
    json c = parseYaml(diffFileText(entry.path()));
    json golden = json::parse(diffFileText(kDiffDir / "golden" / ("yunikorn-" + name + ".json")));
    json ours = yuniKornRun(c["object"]);
    std::vector<std::string> out;
    for (const char* key : {"headPod", "rayCluster", "submitterTemplate"})
      if (golden.contains(key)) diffInto(yuniKornComparable(golden[key]), yuniKornComparable(ours.value(key, json())), key, out);
    for (const char* key : {"headSchedulerName", "submitterSchedulerName"})
      if (golden.contains(key)) diffInto(golden[key], ours.value(key, json()), key, out);
    std::string listed;
    for (const std::string& d : out) listed += "\n  " + d;
    EXPECT_TRUE(out.empty()) << name << ":" << listed;
  }
  EXPECT_GE(cases, 4u);
}

}  // namespace
}  // namespace rayjournal::controller
