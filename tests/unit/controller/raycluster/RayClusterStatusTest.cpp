// The head Service and the status of a RayCluster as KubeRay v1.7.0 writes them (RayJobs and
// users read both: the dashboard port, endpoints, head IPs, replica counts, conditions).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "controller/raycluster/RayClusterBuild.h"
#include "controller/raycluster/RayClusterDecide.h"

namespace rayjournal::controller {
namespace {

using nlohmann::json;

json statusCluster(json headGroupExtra = json::object(), json headPorts = nullptr) {
  json container = {{"name", "ray-head"},
                    {"image", "rayproject/ray:2.60.0"},
                    {"resources", {{"requests", {{"cpu", "1"}, {"memory", "2Gi"}}}}}};
  if (!headPorts.is_null()) container["ports"] = headPorts;
  json head = {{"template", {{"spec", {{"containers", json::array({container})}}}}}};
  head.update(headGroupExtra);
  json worker = {{"name", "w"},
                 {"resources", {{"limits", {{"cpu", "500m"}, {"nvidia.com/gpu", "1"}}}}}};
  return {{"apiVersion", "ray.io/v1"},
          {"kind", "RayCluster"},
          {"metadata", {{"name", "rc"}, {"namespace", "ns"}, {"uid", "u"}, {"generation", 2}}},
          {"spec",
           {{"headGroupSpec", head},
            {"workerGroupSpecs",
             json::array({{{"groupName", "g"},
                           {"replicas", 3},
                           {"minReplicas", 1},
                           {"maxReplicas", 5},
                           {"numOfHosts", 2},
                           {"template", {{"spec", {{"containers", json::array({worker})}}}}}}})}}}};
}

ClusterObserved observeStatus(const json& cluster, std::vector<json> pods = {},
                        std::shared_ptr<const json> service = nullptr, int64_t nowMs = 0) {
  std::vector<std::shared_ptr<const json>> shared;
  for (auto& p : pods) shared.push_back(std::make_shared<const json>(std::move(p)));
  return clusterObserved(std::make_shared<const json>(cluster), shared, std::move(service),
                         {"cluster.local", nowMs});
}

json serviceOf(const json& cluster) { return *headServiceFor(observeStatus(cluster).cluster); }

std::vector<std::string> portNames(const json& svc) {
  std::vector<std::string> names;
  for (const auto& p : svc["spec"]["ports"]) names.push_back(p["name"]);
  return names;
}

TEST(RayClusterStatusTest, TheDefaultHeadServiceIsHeadlessWithKubeRaysDefaultPorts) {
  json svc = serviceOf(statusCluster());
  EXPECT_EQ(svc["metadata"]["name"], "rc-head-svc");
  EXPECT_EQ(svc["spec"]["clusterIP"], "None");
  EXPECT_EQ(svc["spec"]["publishNotReadyAddresses"], true);
  EXPECT_EQ(portNames(svc),
            (std::vector<std::string>{"client", "dashboard", "gcs-server", "metrics", "serve"}));
  EXPECT_EQ(svc["spec"]["ports"][1], (json{{"name", "dashboard"}, {"port", 8265}, {"appProtocol", "tcp"}}));
  EXPECT_EQ(svc["spec"]["selector"]["ray.io/identifier"], "rc-head");
  EXPECT_FALSE(svc["spec"]["selector"].contains("ray.io/group"));
}

TEST(RayClusterStatusTest, DeclaredPortsAndServiceTypeAreHonoured) {
  json ports = json::array({{{"name", "dashboard"}, {"containerPort", 9000}}, {{"containerPort", 7000}}});
  json svc = serviceOf(statusCluster({{"serviceType", "NodePort"}}, ports));
  EXPECT_EQ(portNames(svc), (std::vector<std::string>{"7000-port", "dashboard", "metrics"}));
  EXPECT_EQ(svc["spec"]["type"], "NodePort");
  EXPECT_FALSE(svc["spec"].contains("clusterIP")) << "only a ClusterIP Service is headless";
}

TEST(RayClusterStatusTest, ACustomHeadServiceKeepsItsFieldsAndGetsKubeRaysSelector) {
  json custom = {{"metadata",
                  {{"name", "my-head"},
                   {"namespace", "elsewhere"},
                   {"labels", {{"team", "a"}}},
                   {"annotations", {{"lb", "internal"}}}}},
                 {"spec",
                  {{"type", "LoadBalancer"},
                   {"selector", {{"app", "x"}}},
                   {"ports", json::array({{{"name", "dashboard"}, {"port", 8265}}})}}}};
  json svc = serviceOf(statusCluster({{"headService", custom}}));
  EXPECT_EQ(svc["metadata"]["name"], "my-head");
  EXPECT_EQ(svc["metadata"]["namespace"], "ns") << "always the cluster's namespace";
  EXPECT_EQ(svc["metadata"]["labels"]["team"], "a");
  EXPECT_EQ(svc["metadata"]["labels"]["ray.io/cluster"], "rc");
  EXPECT_EQ(svc["metadata"]["annotations"]["lb"], "internal");
  EXPECT_EQ(svc["spec"]["type"], "LoadBalancer");
  EXPECT_FALSE(svc["spec"]["selector"].contains("app"));
  EXPECT_EQ(svc["spec"]["ports"].size(), 5u) << "the user's dashboard plus four defaults, once";
  EXPECT_EQ(svc["metadata"]["ownerReferences"][0]["uid"], "u");
}

json readyPod(const std::string& name, const std::string& ip) {
  return {{"metadata", {{"name", name}}},
          {"status",
           {{"phase", "Running"},
            {"podIP", ip},
            {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

TEST(RayClusterStatusTest, StatusCountsResourcesHeadAndEndpointsAsKubeRay) {
  std::vector<json> pods = {readyPod("rc-head", "10.1.0.5")};
  for (int i = 0; i < 6; ++i) pods.push_back(readyPod("rc-g-worker-" + std::to_string(i), "10.1.1.1"));
  pods.back()["status"]["conditions"][0]["status"] = "False";
  auto svc = std::make_shared<const json>(json{
      {"metadata", {{"name", "rc-head-svc"}}},
      {"spec",
       {{"clusterIP", "None"},
        {"ports", json::array({{{"name", "dashboard"}, {"port", 8265}, {"targetPort", 8265}},
                               {{"name", "client"}, {"port", 10001}, {"nodePort", 31001}}})}}}});
  json status = *decideRayCluster(observeStatus(statusCluster(), pods, svc, 1'700'000'000'000)).status;
  EXPECT_EQ(status["desiredWorkerReplicas"], 6);
  EXPECT_EQ(status["readyWorkerReplicas"], 5);
  EXPECT_EQ(status["availableWorkerReplicas"], 6);
  EXPECT_EQ(status["minWorkerReplicas"], 2);
  EXPECT_EQ(status["maxWorkerReplicas"], 10);
  EXPECT_EQ(status["desiredCPU"], "4") << "1 + 6 x 500m";
  EXPECT_EQ(status["desiredMemory"], "2Gi");
  EXPECT_EQ(status["desiredGPU"], "6");
  EXPECT_EQ(status["desiredTPU"], "0");
  EXPECT_EQ(status["head"]["podIP"], "10.1.0.5");
  EXPECT_EQ(status["head"]["serviceIP"], "10.1.0.5") << "a headless Service's IP is the Pod's";
  EXPECT_EQ(status["endpoints"], (json{{"dashboard", "8265"}, {"client", "31001"}}));
  EXPECT_FALSE(status.contains("state"));
  EXPECT_EQ(status["observedGeneration"], 2);
  EXPECT_EQ(status["lastUpdateTime"], "2023-11-14T22:13:20Z");
}

TEST(RayClusterStatusTest, ReadyStampsItsTransitionTimeAndOnlyTimeChangingWritesNothing) {
  std::vector<json> pods = {readyPod("rc-head", "10.1.0.5")};
  for (int i = 0; i < 6; ++i) pods.push_back(readyPod("rc-g-worker-" + std::to_string(i), "10.1.1.1"));
  json cluster = statusCluster();
  json status = *decideRayCluster(observeStatus(cluster, pods, nullptr, 1'000'000)).status;
  EXPECT_EQ(status["state"], "ready");
  EXPECT_EQ(status["stateTransitionTimes"]["ready"], "1970-01-01T00:16:40Z");
  EXPECT_EQ(status["conditions"][1]["type"], "RayClusterProvisioned");
  EXPECT_EQ(status["conditions"][1]["status"], "True");
  cluster["status"] = status;
  EXPECT_EQ(decideRayCluster(observeStatus(cluster, pods, nullptr, 9'000'000)).status, nullptr)
      << "a later pass with nothing new writes no status";
  pods[0]["status"]["conditions"][0]["status"] = "False";
  json lost = *decideRayCluster(observeStatus(cluster, pods, nullptr, 9'000'000)).status;
  EXPECT_FALSE(lost.contains("state")) << "not sticky (W15)";
  EXPECT_EQ(lost["conditions"][0]["lastTransitionTime"], "1970-01-01T02:30:00Z");
  EXPECT_EQ(lost["conditions"][1]["status"], "True") << "provisioned stays provisioned";
}

}  // namespace
}  // namespace rayjournal::controller
