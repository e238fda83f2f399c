// Head and worker Pods as KubeRay v1.7.0 builds them: the generated `ray start`, its inputs
// (rayStartParams, resources, the head Service address), env vars, volumes, ports, probes and
// labels. A wrong command here is a cluster that never starts Ray.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "controller/raycluster/RayClusterBuild.h"

namespace rayjournal::controller {
namespace {

using nlohmann::json;

json rayCluster(json headContainer, json workerContainer, json extraSpec = json::object()) {
  json spec = {{"rayVersion", "2.60.0"},
               {"headGroupSpec",
                {{"rayStartParams", {{"num-cpus", "1"}}},
                 {"template", {{"spec", {{"containers", json::array({headContainer})}}}}}}},
               {"workerGroupSpecs",
                json::array({{{"groupName", "small"},
                              {"replicas", 1},
                              {"rayStartParams", json::object()},
                              {"template",
                               {{"spec", {{"containers", json::array({workerContainer})}}}}}}})}};
  spec.update(extraSpec);
  return {{"apiVersion", "ray.io/v1"},
          {"kind", "RayCluster"},
          {"metadata", {{"name", "rc"}, {"namespace", "ns"}, {"uid", "u"}}},
          {"spec", spec}};
}

json plainContainer(const std::string& name) {
  return {{"name", name}, {"image", "rayproject/ray:2.60.0"}};
}

ClusterObserved observe(const json& cluster, const std::string& domain = "cluster.local") {
  return clusterObserved(std::make_shared<const json>(cluster), std::vector<PodView>{}, nullptr, {domain, 0});
}

json headOf(const json& cluster) { return *headPodFor(observe(cluster).cluster); }
json workerOf(const json& cluster, const std::string& domain = "cluster.local") {
  ClusterObserved o = observe(cluster, domain);
  return *workerPodFor(o.cluster, o.cluster.groups[0], "rc-small-worker-0", 0);
}

std::string envOf(const json& container, const std::string& name) {
  for (const auto& e : container["env"])
    if (e["name"] == name) return e.value("value", "<valueFrom>");
  return "<absent>";
}

TEST(RayClusterPodsTest, TheHeadRunsTheGeneratedRayStartWithResourcesFromLimits) {
  json head = plainContainer("ray-head");
  head["resources"] = {{"limits", {{"cpu", "2"}, {"memory", "4Gi"}}}};
  json c = headOf(rayCluster(head, plainContainer("w")))["spec"]["containers"][0];
  std::string rayStart =
      "ray start --head  --block  --dashboard-agent-listen-port=52365  --dashboard-host=0.0.0.0 "
      " --memory=4294967296  --metrics-export-port=8080  --num-cpus=1 ";
  EXPECT_EQ(c["command"], json::array({"/bin/bash", "-c", "--"}));
  EXPECT_EQ(c["args"][0], "ulimit -n ${RAY_START_ULIMIT_OPEN_FILES:-65536}; " + rayStart)
      << "rayStartParams num-cpus wins over the limit; memory comes from the limit";
  EXPECT_EQ(envOf(c, "KUBERAY_GEN_RAY_START_CMD"), rayStart);
  EXPECT_EQ(envOf(c, "RAY_ADDRESS"), "127.0.0.1:6379");
  EXPECT_EQ(envOf(c, "RAY_CLUSTER_NAME"), "<valueFrom>");
  EXPECT_EQ(envOf(c, "RAY_USAGE_STATS_KUBERAY_IN_USE"), "1");
  EXPECT_EQ(envOf(c, "FQ_RAY_IP"), "<absent>") << "workers only";
}

TEST(RayClusterPodsTest, AWorkerJoinsTheHeadServiceByItsFqdnAfterWaitingForGcs) {
  json spec = {{"headGroupSpec",
                {{"rayStartParams", {{"port", "7000"}}},
                 {"headService", {{"metadata", {{"name", "custom"}}}}},
                 {"template", {{"spec", {{"containers", json::array({plainContainer("h")})}}}}}}}};
  json worker = plainContainer("ray-worker");
  worker["resources"] = {{"requests", {{"cpu", "500m"}}}, {"limits", {{"nvidia.com/gpu", 1}}}};
  json pod = workerOf(rayCluster(plainContainer("h"), worker, spec), "example.org");
  const json& c = pod["spec"]["containers"][0];
  std::string args = c["args"][0];
  EXPECT_NE(args.find("ray start  --address=custom.ns.svc.example.org:7000  --block "),
            std::string::npos)
      << args;
  EXPECT_NE(args.find(" --num-cpus=1 "), std::string::npos) << "the request, rounded up";
  EXPECT_NE(args.find(" --num-gpus=1 "), std::string::npos);
  EXPECT_EQ(args.find("dashboard-host"), std::string::npos);
  EXPECT_EQ(envOf(c, "RAY_ADDRESS"), "custom.ns.svc.example.org:7000");
  EXPECT_EQ(envOf(c, "FQ_RAY_IP"), "custom.ns.svc.example.org");
  EXPECT_EQ(envOf(c, "RAY_IP"), "custom");
  const json& init = pod["spec"]["initContainers"][0];
  EXPECT_EQ(init["name"], "wait-gcs-ready");
  EXPECT_NE(init["args"][0].get<std::string>().find(
                "ray health-check --address custom.ns.svc.example.org:7000"),
            std::string::npos);
  EXPECT_EQ(envOf(init, "FQ_RAY_IP"), "custom.ns.svc.example.org");
  EXPECT_EQ(pod["metadata"]["labels"]["ray.io/worker-group-replica-index"], "0");
}

TEST(RayClusterPodsTest, AUserCommandRunsFirstUnlessItStartsRayOrTheUserOptedOut) {
  json withCmd = plainContainer("h");
  withCmd["command"] = json::array({"echo"});
  withCmd["args"] = json::array({"hi"});
  std::string args = headOf(rayCluster(withCmd, plainContainer("w")))["spec"]["containers"][0]
                         ["args"][0];
  EXPECT_EQ(args.rfind(" echo  hi  && ulimit -n", 0), 0u) << args;

  json ownStart = plainContainer("h");
  ownStart["args"] = json::array({"ray start --head --block"});
  json c = headOf(rayCluster(ownStart, plainContainer("w")))["spec"]["containers"][0];
  EXPECT_FALSE(c.contains("command"));
  EXPECT_EQ(c["args"][0], "ray start --head --block");

  json cluster = rayCluster(withCmd, plainContainer("w"));
  cluster["metadata"]["annotations"] = {{"ray.io/overwrite-container-cmd", "true"}};
  json pod = headOf(cluster);
  EXPECT_EQ(pod["spec"]["containers"][0]["command"], json::array({"echo"}));
  EXPECT_EQ(pod["metadata"]["annotations"]["ray.io/overwrite-container-cmd"], "true");
  EXPECT_NE(envOf(pod["spec"]["containers"][0], "KUBERAY_GEN_RAY_START_CMD"), "<absent>")
      << "the generated command is still offered to the user's own";
}

TEST(RayClusterPodsTest, ProbesFollowTheRayVersionAndNeverReplaceTheUsers) {
  json c = headOf(rayCluster(plainContainer("h"), plainContainer("w")))["spec"]["containers"][0];
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"], "/api/healthz");
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["port"], 52365);
  EXPECT_EQ(c["readinessProbe"]["timeoutSeconds"], 5) << "the head's";
  EXPECT_EQ(c["livenessProbe"]["failureThreshold"], 120);

  json old = rayCluster(plainContainer("h"), plainContainer("w"), {{"rayVersion", "2.9.0"}});
  json exec = headOf(old)["spec"]["containers"][0]["readinessProbe"]["exec"]["command"];
  EXPECT_EQ(exec[0], "bash");
  EXPECT_NE(exec[2].get<std::string>().find("localhost:52365/api/local_raylet_healthz"),
            std::string::npos);
  EXPECT_NE(exec[2].get<std::string>().find("localhost:8265/api/gcs_healthz"), std::string::npos);
  json worker = workerOf(old)["spec"]["containers"][0];
  EXPECT_EQ(worker["readinessProbe"]["exec"]["command"][2].get<std::string>().find("gcs_healthz"),
            std::string::npos);
  EXPECT_EQ(worker["readinessProbe"]["timeoutSeconds"], 2);

  json mine = plainContainer("h");
  mine["readinessProbe"] = {{"tcpSocket", {{"port", 6379}}}};
  json kept = headOf(rayCluster(mine, plainContainer("w")))["spec"]["containers"][0];
  EXPECT_EQ(kept["readinessProbe"], mine["readinessProbe"]);
  EXPECT_TRUE(kept.contains("livenessProbe"));
}

TEST(RayClusterPodsTest, SharedMemoryAndMetricsPortAreAddedOnce) {
  json head = plainContainer("h");
  head["resources"] = {{"requests", {{"memory", "2Gi"}}}};
  json pod = headOf(rayCluster(head, plainContainer("w")));
  EXPECT_EQ(pod["spec"]["volumes"][0],
            (json{{"name", "shared-mem"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", "2Gi"}}}}));
  EXPECT_EQ(pod["spec"]["containers"][0]["volumeMounts"][0]["mountPath"], "/dev/shm");
  EXPECT_EQ(pod["spec"]["containers"][0]["ports"][0],
            (json{{"name", "metrics"}, {"containerPort", 8080}}));

  json cluster = rayCluster(head, plainContainer("w"));
  cluster["spec"]["headGroupSpec"]["rayStartParams"]["plasma-directory"] = "/data";
  cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["ports"] =
      json::array({{{"name", "metrics"}, {"containerPort", 9100}}});
  json custom = headOf(cluster);
  EXPECT_FALSE(custom["spec"].contains("volumes"));
  EXPECT_EQ(custom["spec"]["containers"][0]["ports"].size(), 1u);
}

TEST(RayClusterPodsTest, KubeRaysLabelsAndTheTemplatesRestartPolicy) {
  json cluster = rayCluster(plainContainer("h"), plainContainer("w"));
  cluster["spec"]["headGroupSpec"]["template"]["metadata"] = {
      {"labels", {{"ray.io/cluster", "other"}, {"team", "a"}}}};
  cluster["spec"]["workerGroupSpecs"][0]["template"]["spec"]["restartPolicy"] = "Always";
  json head = headOf(cluster);
  const json& labels = head["metadata"]["labels"];
  EXPECT_EQ(labels["ray.io/cluster"], "rc") << "not overridable";
  EXPECT_EQ(labels["team"], "a");
  EXPECT_EQ(labels["ray.io/is-ray-node"], "yes");
  EXPECT_EQ(labels["ray.io/identifier"], "rc-head");
  EXPECT_EQ(labels["ray.io/group"], "headgroup");
  EXPECT_FALSE(head["spec"].contains("restartPolicy")) << "left to the API server's default";
  json worker = workerOf(cluster);
  EXPECT_EQ(worker["spec"]["restartPolicy"], "Always");
  EXPECT_EQ(worker["metadata"]["labels"]["ray.io/identifier"], "rc-worker");
}

}  // namespace
}  // namespace rayjournal::controller
