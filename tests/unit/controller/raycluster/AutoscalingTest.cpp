// In-tree autoscaling as KubeRay v1.7.0 does it: the head Pod's autoscaler sidecar, --no-monitor
// and ServiceAccount; autoscalerOptions merged; v1/v2; the autoscaler's RBAC created before any
// Pod; and Pods that follow the autoscaler (workersToDelete exactly, no other Pod deleted unless
// ENABLE_RANDOM_POD_DELETE). A wrong sidecar is an autoscaler that never scales; a deleted Pod
// the autoscaler did not name is a task killed mid-run.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "controller/raycluster/RayClusterBuild.h"
#include "controller/raycluster/RayClusterDecide.h"

namespace rayjournal::controller {
namespace {

using nlohmann::json;

json autoscalingCluster(json extraSpec = json::object()) {
  json spec = {
      {"rayVersion", "2.60.0"},
      {"enableInTreeAutoscaling", true},
      {"headGroupSpec",
       {{"rayStartParams", {{"num-cpus", "0"}}},
        {"template",
         {{"spec",
           {{"containers", json::array({{{"name", "ray-head"},
                                         {"image", "rayproject/ray:2.60.0"},
                                         {"imagePullPolicy", "Always"}}})}}}}}}},
      {"workerGroupSpecs",
       json::array({{{"groupName", "small"},
                     {"replicas", 0},
                     {"minReplicas", 0},
                     {"maxReplicas", 5},
                     {"rayStartParams", json::object()},
                     {"template",
                      {{"spec", {{"containers", json::array({{{"name", "w"}, {"image", "rayproject/ray:2.60.0"}}})}}}}}}})}};
  spec.update(extraSpec);
  return {{"apiVersion", "ray.io/v1"},
          {"kind", "RayCluster"},
          {"metadata", {{"name", "rc"}, {"namespace", "ns"}, {"uid", "u"}}},
          {"spec", spec}};
}

ClusterObserved observe(const json& cluster, std::vector<PodView> pods = {}, PodInjection inject = {}) {
  ClusterContext context;
  context.injection = inject;
  return clusterObserved(std::make_shared<const json>(cluster), std::move(pods), nullptr, context);
}

json headOf(const json& cluster) { return *headPodFor(observe(cluster).cluster); }

json containerNamed(const json& pod, const std::string& name) {
  for (const auto& c : pod["spec"]["containers"])
    if (c["name"] == name) return c;
  return nullptr;
}

std::string envOf(const json& container, const std::string& name) {
  for (const auto& e : container.value("env", json::array()))
    if (e["name"] == name) return e.value("value", "<valueFrom>");
  return "<absent>";
}

bool mounts(const json& container, const std::string& volume, const std::string& path) {
  for (const auto& m : container.value("volumeMounts", json::array()))
    if (m["name"] == volume && m["mountPath"] == path) return true;
  return false;
}

std::vector<std::string> createdKinds(const ClusterPlan& plan) {
  std::vector<std::string> kinds;
  for (const auto& [kind, object] : plan.creates) kinds.push_back(kind);
  return kinds;
}

TEST(AutoscalingTest, TheHeadRunsTheAutoscalerSidecarAsKubeRayBuildsIt) {
  json head = headOf(autoscalingCluster());
  ASSERT_EQ(head["spec"]["containers"].size(), 2u);
  json sidecar = containerNamed(head, "autoscaler");
  ASSERT_FALSE(sidecar.is_null());
  EXPECT_EQ(sidecar["image"], "rayproject/ray:2.60.0");
  EXPECT_EQ(sidecar["imagePullPolicy"], "IfNotPresent");
  EXPECT_EQ(sidecar["command"], json::array({"/bin/bash", "-c", "--"}));
  EXPECT_EQ(sidecar["args"], json::array({"ray kuberay-autoscaler --cluster-name $(RAY_CLUSTER_NAME) "
                                          "--cluster-namespace $(RAY_CLUSTER_NAMESPACE)"}));
  EXPECT_EQ(envOf(sidecar, "RAY_CLUSTER_NAME"), "<valueFrom>");
  EXPECT_EQ(envOf(sidecar, "RAY_HEAD_POD_NAME"), "<valueFrom>");
  EXPECT_EQ(envOf(sidecar, "KUBERAY_CRD_VER"), "v1");
  EXPECT_EQ(sidecar["resources"]["limits"], (json{{"cpu", "500m"}, {"memory", "512Mi"}}));
  EXPECT_EQ(sidecar["resources"]["requests"], sidecar["resources"]["limits"]);
  EXPECT_EQ(head["spec"]["serviceAccountName"], "rc") << "the cluster's own, bound to its Role";
  json ray = head["spec"]["containers"][0];
  EXPECT_NE(ray["args"][0].get<std::string>().find("--no-monitor"), std::string::npos);
  EXPECT_TRUE(mounts(ray, "ray-logs", "/tmp/ray"));
  EXPECT_TRUE(mounts(sidecar, "ray-logs", "/tmp/ray"));
  EXPECT_EQ(envOf(ray, "RAY_enable_autoscaler_v2"), "<absent>") << "no version: Ray decides";
}

TEST(AutoscalingTest, WithoutAutoscalingTheHeadIsUntouched) {
  json cluster = autoscalingCluster({{"enableInTreeAutoscaling", false}});
  json head = headOf(cluster);
  EXPECT_EQ(head["spec"]["containers"].size(), 1u);
  EXPECT_FALSE(head["spec"].contains("serviceAccountName"));
  EXPECT_EQ(head["spec"]["containers"][0]["args"][0].get<std::string>().find("--no-monitor"),
            std::string::npos);
}

TEST(AutoscalingTest, AutoscalerOptionsReplaceOrAppendAsKubeRayMergesThem) {
  json options = {{"image", "my/autoscaler:1"},
                  {"imagePullPolicy", "Always"},
                  {"resources", {{"limits", {{"cpu", "1"}}}}},
                  {"securityContext", {{"runAsUser", 1000}}},
                  {"env", json::array({{{"name", "EXTRA"}, {"value", "1"}}})},
                  {"volumeMounts", json::array({{{"name", "v"}, {"mountPath", "/v"}}})}};
  json sidecar = containerNamed(headOf(autoscalingCluster({{"autoscalerOptions", options}})), "autoscaler");
  EXPECT_EQ(sidecar["image"], "my/autoscaler:1");
  EXPECT_EQ(sidecar["imagePullPolicy"], "Always");
  EXPECT_EQ(sidecar["resources"], options["resources"]);
  EXPECT_EQ(sidecar["securityContext"], options["securityContext"]);
  EXPECT_EQ(envOf(sidecar, "EXTRA"), "1");
  EXPECT_EQ(envOf(sidecar, "KUBERAY_CRD_VER"), "v1") << "appended, not replaced";
  EXPECT_TRUE(mounts(sidecar, "v", "/v"));
  EXPECT_TRUE(mounts(sidecar, "ray-logs", "/tmp/ray"));
}

TEST(AutoscalingTest, VersionTwoMarksTheHeadAndNeverRestartsAnyPod) {
  json cluster = autoscalingCluster({{"autoscalerOptions", {{"version", "v2"}}}});
  json head = headOf(cluster);
  EXPECT_EQ(envOf(head["spec"]["containers"][0], "RAY_enable_autoscaler_v2"), "true");
  EXPECT_EQ(head["spec"]["restartPolicy"], "Never");
  ClusterObserved o = observe(cluster);
  json worker = *workerPodFor(o.cluster, o.cluster.groups[0], "rc-small-worker-0", 0);
  EXPECT_EQ(worker["spec"]["restartPolicy"], "Never");
  EXPECT_EQ(worker["spec"]["containers"].size(), 1u) << "the sidecar is the head's only";
  json v1 = headOf(autoscalingCluster({{"autoscalerOptions", {{"version", "v1"}}}}));
  EXPECT_EQ(envOf(v1["spec"]["containers"][0], "RAY_enable_autoscaler_v2"), "false");
  EXPECT_FALSE(v1["spec"].contains("restartPolicy"));
}

TEST(AutoscalingTest, TheSidecarCarriesTokenAuthAndTheLoginShell) {
  json cluster = autoscalingCluster({{"authOptions", {{"mode", "token"}}}});
  ClusterObserved o = observe(cluster, {}, PodInjection{true, true, true, false, nullptr});
  json sidecar = containerNamed(*headPodFor(o.cluster), "autoscaler");
  EXPECT_EQ(sidecar["command"], json::array({"/bin/bash", "-cl", "--"}));
  EXPECT_NE(envOf(sidecar, "RAY_AUTH_TOKEN"), "<absent>");
}


TEST(AutoscalingTest, TheAutoscalersRbacIsCreatedBeforeAnyPodAndOwnedByTheCluster) {
  ClusterObserved o = observe(autoscalingCluster());
  o.autoscalerRbac = {false, false, false};
  ClusterPlan plan = decideRayCluster(o);
  EXPECT_EQ(createdKinds(plan),
            (std::vector<std::string>{"ServiceAccount", "Role", "RoleBinding", "Service", "Pod"}));
  const json& role = *plan.creates[1].second;
  EXPECT_EQ(role["metadata"]["name"], "rc");
  EXPECT_EQ(role["metadata"]["ownerReferences"][0]["uid"], "u");
  EXPECT_EQ(role["rules"][0]["verbs"], json::array({"get", "list", "watch", "patch"}));
  EXPECT_EQ(role["rules"][1]["resources"], json::array({"pods/resize"}));
  EXPECT_EQ(role["rules"][2]["resources"], json::array({"rayclusters"}));
  const json& binding = *plan.creates[2].second;
  EXPECT_EQ(binding["subjects"][0]["name"], "rc");
  EXPECT_EQ(binding["roleRef"]["name"], "rc");
  o.autoscalerRbac = {true, true, false};
  EXPECT_EQ(createdKinds(decideRayCluster(o)), (std::vector<std::string>{"RoleBinding", "Service", "Pod"}));
}

TEST(AutoscalingTest, AMissingServiceAccountTheUserNamedIsAWarningAndNothingElse) {
  json cluster = autoscalingCluster();
  cluster["spec"]["headGroupSpec"]["template"]["spec"]["serviceAccountName"] = "team-sa";
  ClusterObserved o = observe(cluster);
  o.autoscalerRbac = {false, false, false};
  ClusterPlan plan = decideRayCluster(o);
  EXPECT_TRUE(plan.creates.empty()) << "no Pod could run as a ServiceAccount that is not there";
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_EQ(plan.warnings[0].reason, "AutoscalerServiceAccountNotFound");
  EXPECT_NE(plan.warnings[0].message.find("ServiceAccount team-sa is not found"), std::string::npos);
  EXPECT_GE(plan.retryAfterMs, 0) << "not watched: only a retry notices the user created it";
  o.autoscalerRbac = {true, false, false};
  EXPECT_EQ(createdKinds(decideRayCluster(o)), (std::vector<std::string>{"Role", "RoleBinding", "Service", "Pod"}));
  EXPECT_EQ((*headPodFor(o.cluster))["spec"]["serviceAccountName"], "team-sa");
}

PodView runningPod(const std::string& name) {
  PodView p;
  p.name = name;
  p.running = p.ready = true;
  return p;
}

std::vector<PodView> headAndWorkers(int workers) {
  std::vector<PodView> pods{runningPod("rc-head")};
  for (int i = 0; i < workers; ++i) pods.push_back(runningPod("rc-small-worker-" + std::to_string(i)));
  return pods;
}

TEST(AutoscalingTest, OnlyThePodsTheAutoscalerNamesAreDeleted) {
  json cluster = autoscalingCluster();
  cluster["spec"]["workerGroupSpecs"][0]["replicas"] = 1;
  cluster["spec"]["workerGroupSpecs"][0]["scaleStrategy"] = {{"workersToDelete", {"rc-small-worker-1"}}};
  ClusterPlan plan = decideRayCluster(observe(cluster, headAndWorkers(3)));
  EXPECT_EQ(plan.deletePods, std::vector<std::string>{"rc-small-worker-1"})
      << "one surplus Pod stays: the autoscaler did not name it";
  EXPECT_EQ(createdKinds(plan), std::vector<std::string>{"Service"}) << "no Pod replaces the named one";
  PodInjection random;
  random.randomPodDelete = true;  // ENABLE_RANDOM_POD_DELETE=true
  plan = decideRayCluster(observe(cluster, headAndWorkers(3), random));
  std::sort(plan.deletePods.begin(), plan.deletePods.end());
  EXPECT_EQ(plan.deletePods, (std::vector<std::string>{"rc-small-worker-1", "rc-small-worker-2"}));
}

TEST(AutoscalingTest, AReplicaCountTheAutoscalerRaisedIsCreatedUpToMax) {
  json cluster = autoscalingCluster();
  cluster["spec"]["workerGroupSpecs"][0]["replicas"] = 8;  // above maxReplicas 5
  ClusterPlan plan = decideRayCluster(observe(cluster, headAndWorkers(1)));
  EXPECT_EQ(createdKinds(plan), (std::vector<std::string>{"Service", "Pod", "Pod", "Pod", "Pod"}));
  EXPECT_EQ((*plan.creates.back().second)["metadata"]["name"], "rc-small-worker-4");
}

TEST(AutoscalingTest, ThePassThatDeletesNamedPodsSaysTheAutoscalerNamedThem) {
  json cluster = autoscalingCluster();
  cluster["spec"]["workerGroupSpecs"][0]["scaleStrategy"] = {{"workersToDelete", {"rc-small-worker-0"}}};
  ClusterPlan plan = decideRayCluster(observe(cluster, headAndWorkers(1)));
  EXPECT_EQ(plan.why.rfind("the autoscaler named rc-small-worker-0 in workersToDelete; ", 0), 0u)
      << plan.why;
}

TEST(AutoscalingTest, VersionOneWarnsOfWorkerGroupsThatRestartInPlace) {
  json cluster = autoscalingCluster({{"autoscalerOptions", {{"version", "v1"}}}});
  json second = cluster["spec"]["workerGroupSpecs"][0];
  second["groupName"] = "big";
  cluster["spec"]["workerGroupSpecs"].push_back(second);
  cluster["spec"]["workerGroupSpecs"][0]["template"]["spec"]["restartPolicy"] = "Always";
  cluster["spec"]["workerGroupSpecs"][1]["template"]["spec"]["restartPolicy"] = "OnFailure";
  ClusterPlan plan = decideRayCluster(observe(cluster));
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_EQ(plan.warnings[0].reason, "InvalidRayClusterSpec");
  EXPECT_EQ(plan.warnings[0].action, "Validate");
  EXPECT_EQ(plan.warnings[0].message,
            "RayCluster spec warning ns/rc: restartPolicy for worker groups [small, big] should be "
            "Never or unset when using autoscaler V1");
  EXPECT_FALSE(plan.creates.empty()) << "a warning, not a refusal: the cluster is built";
  cluster["spec"]["workerGroupSpecs"][0]["template"]["spec"]["restartPolicy"] = "Never";
  cluster["spec"]["workerGroupSpecs"][1]["template"]["spec"].erase("restartPolicy");
  EXPECT_TRUE(decideRayCluster(observe(cluster)).warnings.empty());
  cluster["spec"]["workerGroupSpecs"][0]["template"]["spec"]["restartPolicy"] = "Always";
  cluster["spec"]["autoscalerOptions"].erase("version");  // Ray's own choice: KubeRay is silent
  EXPECT_TRUE(decideRayCluster(observe(cluster)).warnings.empty());
}

TEST(AutoscalingTest, ASpecChangeAfterTheLastStatusIsAFactWithTheScaleItLeft) {
  json cluster = autoscalingCluster();
  cluster["metadata"]["generation"] = 3;
  cluster["status"] = {{"observedGeneration", 2}};
  cluster["spec"]["workerGroupSpecs"][0]["replicas"] = 1;
  cluster["spec"]["workerGroupSpecs"][0]["scaleStrategy"] = {
      {"workersToDelete", {"rc-small-worker-2", "rc-small-worker-0"}}};
  RayClusterView view = observe(cluster).cluster;
  ASSERT_TRUE(specChangedSinceStatus(view));
  events::SpecChanged fact = specChangedOf(view, "python-requests");
  EXPECT_EQ(fact.generation, 3);
  EXPECT_EQ(fact.changedBy, "python-requests");
  EXPECT_EQ(fact.workers, "small: replicas 1, workersToDelete rc-small-worker-0 rc-small-worker-2");
  cluster["status"]["observedGeneration"] = 3;
  EXPECT_FALSE(specChangedSinceStatus(observe(cluster).cluster)) << "the status recorded it";
  cluster["status"].erase("observedGeneration");
  EXPECT_FALSE(specChangedSinceStatus(observe(cluster).cluster))
      << "no status yet: the cluster is new, not changed";
}

}  // namespace
}  // namespace rayjournal::controller
