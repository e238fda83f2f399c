// Nothing KubeRay's schema offers is ignored in silence: every field of the RayJob and RayCluster
// CRDs rayjournal serves (deploy/crds, KubeRay v1.7.0's) is covered by a rule that says whether
// rayjournal implements it, Ray reads it, or the user is warned; a field a newer CRD adds fails
// here until someone decides. And the warned fields are found in objects that set them.
#include "controller/FieldSupport.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "adapters/YamlJson.h"

namespace rayjournal::controller {
namespace {

using nlohmann::json;

json specSchema(const std::string& crd) {
  std::ifstream in(std::string(RAYJOURNAL_SOURCE_DIR) + "/deploy/crds/" + crd);
  std::stringstream text;
  text << in.rdbuf();
  json doc = parseYaml(text.str());
  for (const auto& v : doc["spec"]["versions"])
    if (v["name"] == "v1") return v["schema"]["openAPIV3Schema"]["properties"]["spec"];
  return json();
}

// Whether a rule names a field below path (then the walk goes on below a rule that covers path).
bool rulesBelow(const std::string& kind, const std::string& path) {
  auto below = [&](const std::vector<FieldRule>& rules, const std::string& at) {
    for (const auto& r : rules)
      if (r.path.size() > at.size() && r.path.substr(0, at.size()) == at &&
          (r.path[at.size()] == '.' || r.path[at.size()] == '['))
        return true;
    return false;
  };
  if (kind == "RayCluster") return below(rayClusterSpecRules(), path);
  if (path == "rayClusterSpec") return true;
  if (path.rfind("rayClusterSpec.", 0) == 0) return below(rayClusterSpecRules(), path.substr(15));
  return below(rayJobSpecRules(), path);
}

// Walks the schema; a path a rule covers is not walked further (a rule covers its subtree)
// unless a rule names a field below it.
void uncovered(const std::string& kind, const json& node, const std::string& path,
               std::vector<std::string>& out, std::set<std::string>& seenRules) {
  if (!path.empty()) {
    if (const FieldRule* rule = ruleFor(kind, path)) {
      seenRules.insert(std::string(rule->path));
      if (rule->path == path && !rulesBelow(kind, path)) return;
    }
  }
  if (node.value("type", "") == "array" && node.contains("items"))
    return uncovered(kind, node["items"], path + "[]", out, seenRules);
  if (!node.contains("properties")) {
    if (!ruleFor(kind, path)) out.push_back(path);
    return;
  }
  for (const auto& [key, child] : node["properties"].items())
    uncovered(kind, child, path.empty() ? key : path + "." + key, out, seenRules);
}

TEST(FieldSupportTest, EveryFieldOfKubeRaysSchemasHasARule) {
  for (const auto& [kind, crd] : {std::pair{"RayCluster", "ray.io_rayclusters.yaml"},
                                  std::pair{"RayJob", "ray.io_rayjobs.yaml"}}) {
    json schema = specSchema(crd);
    ASSERT_TRUE(schema.contains("properties")) << crd;
    std::vector<std::string> missing;
    std::set<std::string> seen;
    uncovered(kind, schema, "", missing, seen);
    EXPECT_TRUE(missing.empty()) << kind << " fields with no rule (implement or warn): "
                                 << json(missing).dump();
  }
}

TEST(FieldSupportTest, EveryRuleNamesAFieldOfTheSchema) {
  std::set<std::string> seen;
  std::vector<std::string> missing;
  uncovered("RayCluster", specSchema("ray.io_rayclusters.yaml"), "", missing, seen);
  for (const auto& rule : rayClusterSpecRules())
    EXPECT_TRUE(seen.count(std::string(rule.path))) << "no such RayCluster field: " << rule.path;
  seen.clear();
  uncovered("RayJob", specSchema("ray.io_rayjobs.yaml"), "", missing, seen);
  for (const auto& rule : rayJobSpecRules())
    EXPECT_TRUE(seen.count(std::string(rule.path))) << "no such RayJob field: " << rule.path;
}

TEST(FieldSupportTest, AnIgnoredFieldIsFoundOnlyWhereItIsSet) {
  json cluster = {{"spec",
                   {{"networkPolicy", {{"mode", "DenyAll"}}},
                    {"suspend", false},
                    {"headGroupSpec", {{"enableIngress", true}}},
                    {"workerGroupSpecs", json::array({{{"groupName", "a"}}})}}}};
  std::vector<IgnoredField> found = ignoredFieldsOf("RayCluster", cluster);
  std::vector<std::string> paths;
  for (const auto& f : found) paths.push_back(f.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"spec.headGroupSpec.enableIngress", "spec.networkPolicy"}))
      << "suspend: false asks for nothing";
  json job = {{"spec", {{"entrypoint", "python x.py"}, {"rayClusterSpec", cluster["spec"]}}}};
  std::vector<IgnoredField> inJob = ignoredFieldsOf("RayJob", job);
  ASSERT_EQ(inJob.size(), 2u);
  EXPECT_EQ(inJob[1].path, "spec.rayClusterSpec.networkPolicy");
  EXPECT_NE(inJob[1].instead.find("NetworkPolicy"), std::string::npos);
}

// docs/compatibility.md lists what is not implemented; it must name every warned field.
TEST(FieldSupportTest, TheCompatibilityDocNamesEveryIgnoredField) {
  std::ifstream in(std::string(RAYJOURNAL_SOURCE_DIR) + "/docs/compatibility.md");
  std::stringstream text;
  text << in.rdbuf();
  for (const auto& rule : rayClusterSpecRules()) {
    if (rule.support != Support::Ignored) continue;
    EXPECT_NE(text.str().find("`spec." + std::string(rule.path) + "`"), std::string::npos)
          << "docs/compatibility.md does not list spec." << rule.path;
  }
}

}  // namespace
}  // namespace rayjournal::controller
