// What KubeRay's configuration file adds to every Ray Pod (raycluster_controller.go buildHeadPod
// and buildWorkerPod): the sidecars after every container KubeRay builds, the default env only
// where the Ray container does not set it, labels and annotations only where the Pod has no
// such key. A log shipper missing from a Pod is a log lost; a default overriding the user's
// value is a cluster that behaves as its spec does not say.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "controller/raycluster/RayClusterBuild.h"

namespace rayjournal::controller {
namespace {

using nlohmann::json;

json defaultsCluster(bool autoscaling) {
  json head = {{"name", "ray-head"},
               {"image", "rayproject/ray:2.60.0"},
               {"env", json::array({{{"name", "TEAM_ENV"}, {"value", "users"}}})}};
  json tmpl = {{"metadata", {{"labels", {{"team", "users"}}}, {"annotations", {{"note", "users"}}}}},
               {"spec", {{"containers", json::array({head})}}}};
  return {{"apiVersion", "ray.io/v1"},
          {"kind", "RayCluster"},
          {"metadata", {{"name", "rc"}, {"namespace", "ns"}, {"uid", "u"}}},
          {"spec",
           {{"rayVersion", "2.60.0"},
            {"enableInTreeAutoscaling", autoscaling},
            {"headGroupSpec", {{"rayStartParams", json::object()}, {"template", tmpl}}},
            {"workerGroupSpecs",
             json::array({{{"groupName", "small"},
                           {"replicas", 1},
                           {"rayStartParams", json::object()},
                           {"template", tmpl}}})}}}};
}

std::shared_ptr<const PodDefaults> platformDefaults() {
  PodDefaults d;
  d.headSidecars = model::Document(json::array({{{"name", "fluentbit"}, {"image", "fluent-bit:1.9"}}}));
  d.workerSidecars = model::Document(json::array({{{"name", "proxy"}, {"image", "envoy:1"}}}));
  d.containerEnvs = model::Document(json::array({{{"name", "TEAM_ENV"}, {"value", "platform"}},
                                                 {{"name", "RAY_enable_open_telemetry"}, {"value", "true"}}}));
  d.labels = {{"team", "platform"}, {"cost-centre", "42"}, {"ray.io/node-type", "forged"}};
  d.annotations = {{"note", "platform"}, {"prometheus.io/scrape", "true"}};
  return std::make_shared<const PodDefaults>(std::move(d));
}

ClusterObserved defaultsObserve(const json& c, std::shared_ptr<const PodDefaults> pods) {
  ClusterContext context;
  context.injection.defaults = std::move(pods);
  return clusterObserved(std::make_shared<const json>(c), std::vector<PodView>{}, nullptr, context);
}

std::vector<std::string> defaultsContainerNames(const json& pod) {
  std::vector<std::string> names;
  for (const auto& c : pod["spec"]["containers"]) names.push_back(c["name"]);
  return names;
}

std::string defaultsEnvOf(const json& container, const std::string& name) {
  for (const auto& e : container.value("env", json::array()))
    if (e["name"] == name) return e.value("value", "<valueFrom>");
  return "<absent>";
}

TEST(PodDefaultsTest, HeadSidecarComesAfterTheAutoscaler) {
  json head = *headPodFor(defaultsObserve(defaultsCluster(true), platformDefaults()).cluster);
  EXPECT_EQ(defaultsContainerNames(head), (std::vector<std::string>{"ray-head", "autoscaler", "fluentbit"}));
}

TEST(PodDefaultsTest, WorkerGetsOnlyTheWorkerSidecar) {
  ClusterObserved o = defaultsObserve(defaultsCluster(false), platformDefaults());
  json worker = *workerPodFor(o.cluster, o.cluster.groups[0], "rc-small-worker-0", 0);
  EXPECT_EQ(defaultsContainerNames(worker), (std::vector<std::string>{"ray-head", "proxy"}));
}

TEST(PodDefaultsTest, DefaultEnvFillsOnlyWhatTheRayContainerLacks) {
  json head = *headPodFor(defaultsObserve(defaultsCluster(false), platformDefaults()).cluster);
  const json& ray = head["spec"]["containers"][0];
  EXPECT_EQ(defaultsEnvOf(ray, "TEAM_ENV"), "users");
  EXPECT_EQ(defaultsEnvOf(ray, "RAY_enable_open_telemetry"), "true");
  EXPECT_EQ(defaultsEnvOf(head["spec"]["containers"][1], "RAY_enable_open_telemetry"), "<absent>")
      << "the sidecar is the platform's own container";
}

TEST(PodDefaultsTest, DefaultLabelsAndAnnotationsNeverOverride) {
  json head = *headPodFor(defaultsObserve(defaultsCluster(false), platformDefaults()).cluster);
  const json& meta = head["metadata"];
  EXPECT_EQ(meta["labels"]["team"], "users");
  EXPECT_EQ(meta["labels"]["cost-centre"], "42");
  EXPECT_EQ(meta["labels"]["ray.io/node-type"], "head") << "KubeRay's own label stays";
  EXPECT_EQ(meta["annotations"]["note"], "users");
  EXPECT_EQ(meta["annotations"]["prometheus.io/scrape"], "true");
}

TEST(PodDefaultsTest, WithoutAConfigurationNothingIsAdded) {
  json head = *headPodFor(defaultsObserve(defaultsCluster(false), nullptr).cluster);
  EXPECT_EQ(defaultsContainerNames(head), (std::vector<std::string>{"ray-head"}));
  EXPECT_FALSE(head["metadata"]["labels"].contains("cost-centre"));
}

}  // namespace
}  // namespace rayjournal::controller
