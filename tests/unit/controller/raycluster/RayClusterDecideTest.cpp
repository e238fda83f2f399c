// The RayCluster decision: deterministic Pod names (W14), readiness recomputed every time (W15),
// suspended worker groups, and the head Service with the dashboard port.
#include <gtest/gtest.h>

#include "controller/rayjob/Views.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "controller/raycluster/CachedPod.h"
#include "controller/raycluster/RayClusterBuild.h"
#include "controller/raycluster/RayClusterDecide.h"

namespace rayjournal::controller {
namespace {

using nlohmann::json;
using Pods = std::vector<std::shared_ptr<const json>>;

// The decision on documents, through the same boundary the reconciler uses.
ClusterPlan decideOn(const json& cluster, const Pods& pods = {}, bool headService = false) {
  auto service = headService ? std::make_shared<const json>(json{
                                   {"metadata", {{"name", "c1-head-svc"}}},
                                   {"spec", {{"clusterIP", "None"}}}})
                             : nullptr;
  return decideRayCluster(clusterObserved(std::make_shared<const json>(cluster), pods, service));
}

json cluster(int replicas = 2, bool suspended = false) {
  return {{"apiVersion", "ray.io/v1"},
          {"kind", "RayCluster"},
          {"metadata", {{"name", "c1"}, {"namespace", "ns"}, {"uid", "u-1"}, {"generation", 3}}},
          {"spec",
           {{"headGroupSpec",
             {{"template",
               {{"metadata", {{"labels", {{"team", "a"}}}}},
                {"spec",
                 {{"containers",
                   json::array({{{"name", "ray-head"},
                                 {"image", "rayproject/ray:2.60.0"},
                                 {"ports", json::array({{{"name", "dashboard"},
                                                         {"containerPort", 9000}}})}}})}}}}}}},
            {"workerGroupSpecs",
             json::array({{{"groupName", "gpu"},
                           {"replicas", replicas},
                           {"suspend", suspended},
                           {"template",
                            {{"spec", {{"containers", json::array({{{"name", "w"}}})}}}}}}})}}}};
}

json pod(const std::string& name, bool ready) {
  json p{{"metadata", {{"name", name}, {"namespace", "ns"}}}, {"status", {{"phase", "Pending"}}}};
  if (ready)
    p["status"] = {{"phase", "Running"},
                   {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}};
  return p;
}

std::vector<std::shared_ptr<const json>> sharedPods(const std::vector<json>& pods) {
  std::vector<std::shared_ptr<const json>> out;
  for (const auto& p : pods) out.push_back(std::make_shared<const json>(p));
  return out;
}

std::vector<std::string> createdNames(const ClusterPlan& plan) {
  std::vector<std::string> names;
  for (const auto& [kind, o] : plan.creates)
    names.push_back(kind + " " + (*o)["metadata"]["name"].get<std::string>());
  return names;
}

TEST(RayClusterDecideTest, CreatesHeadServiceHeadAndWorkersWithDeterministicNames) {
  ClusterPlan plan = decideOn(cluster(), {}, false);
  EXPECT_EQ(createdNames(plan),
            (std::vector<std::string>{"Service c1-head-svc", "Pod c1-head", "Pod c1-gpu-worker-0",
                                      "Pod c1-gpu-worker-1"}));
  const json& svc = (*plan.creates[0].second);
  EXPECT_EQ(svc["spec"]["ports"][0]["name"], "dashboard");
  EXPECT_EQ(svc["spec"]["ports"][0]["port"], 9000);
  const json& head = (*plan.creates[1].second);
  EXPECT_EQ(head["metadata"]["labels"]["ray.io/node-type"], "head");
  EXPECT_EQ(head["metadata"]["labels"]["team"], "a") << "template labels kept";
  EXPECT_EQ(head["metadata"]["ownerReferences"][0]["uid"], "u-1");
  EXPECT_EQ(head["spec"]["containers"][0]["image"], "rayproject/ray:2.60.0");
  EXPECT_EQ(plan.status, nullptr)
      << "the pass that creates Pods leaves the status to the next, which counts them";
  // The same observation gives the same plan: a lost create response is re-created under the
  // same name (AlreadyExists), never a second head (W14).
  EXPECT_EQ(createdNames(decideOn(cluster(), {}, false)), createdNames(plan));
}

TEST(RayClusterDecideTest, ReadyOnlyWhileEveryPodIsReady) {
  std::vector<json> pods{pod("c1-head", true), pod("c1-gpu-worker-0", true),
                         pod("c1-gpu-worker-1", true)};
  json c = cluster();
  ClusterPlan plan = decideOn(c, sharedPods(pods), true);
  EXPECT_TRUE(plan.creates.empty());
  ASSERT_TRUE(plan.status != nullptr);
  EXPECT_EQ((*plan.status)["state"], "ready");
  EXPECT_EQ((*plan.status)["readyWorkerReplicas"], 2);
  EXPECT_EQ((*plan.status)["observedGeneration"], 3);
  c["status"] = *plan.status;
  EXPECT_TRUE(decideOn(c, sharedPods(pods), true).status == nullptr) << "no change, no write";
  // The head stops being ready: the cluster is no longer ready (W15: not sticky).
  pods[0] = pod("c1-head", false);
  ClusterPlan after = decideOn(c, sharedPods(pods), true);
  ASSERT_TRUE(after.status != nullptr);
  EXPECT_FALSE(after.status->contains("state"));
  EXPECT_EQ((*after.status)["conditions"][0]["status"], "False");
}

// A worker that died is replaced under a name no earlier worker of the cluster had (KubeRay's
// are generated): Ray's autoscaler tells nodes apart by Pod name, and KubeRay's
// TestRayClusterAutoscalerPlacementGroup waits for replacements under new names.
TEST(RayClusterDecideTest, AReplacementWorkerGetsANameNoEarlierWorkerHad) {
  std::vector<json> pods{pod("c1-head", true), pod("c1-gpu-worker-1", true)};
  ClusterObserved o = clusterObserved(std::make_shared<const json>(cluster()), sharedPods(pods),
                                      std::make_shared<const json>(json{{"metadata", {{"name", "c1-head-svc"}}}}));
  o.nextWorkerIndex["gpu"] = 2;  // the journal named -worker-0 and -worker-1 before
  EXPECT_EQ(createdNames(decideRayCluster(o)), std::vector<std::string>{"Pod c1-gpu-worker-2"});
  // Without the journal's count (a cluster created before it was kept) the lowest free index.
  o.nextWorkerIndex.clear();
  EXPECT_EQ(createdNames(decideRayCluster(o)), std::vector<std::string>{"Pod c1-gpu-worker-0"});
}

// KubeRay's e2e TestRayClusterManagedBy: a cluster Kueue's MultiKueue manages is left alone (no
// Service, no Pod, no status); KubeRay's own name is the default.
TEST(RayClusterDecideTest, AClusterManagedByAnotherControllerIsLeftToIt) {
  json c = cluster();
  c["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue";
  ClusterPlan plan = decideOn(c);
  EXPECT_TRUE(plan.creates.empty());
  EXPECT_EQ(plan.status, nullptr);
  EXPECT_EQ(plan.why, "managed by kueue.x-k8s.io/multikueue: left to it");
  c["spec"]["managedBy"] = "ray.io/kuberay-operator";
  EXPECT_FALSE(decideOn(c).creates.empty());
}

TEST(RayClusterDecideTest, SuspendedOrShrunkGroupsLoseTheirPods) {
  std::vector<json> pods{pod("c1-head", true), pod("c1-gpu-worker-0", true),
                         pod("c1-gpu-worker-1", true)};
  ClusterPlan suspended = decideOn(cluster(2, true), sharedPods(pods), true);
  std::sort(suspended.deletePods.begin(), suspended.deletePods.end());
  EXPECT_EQ(suspended.deletePods, (std::vector<std::string>{"c1-gpu-worker-0", "c1-gpu-worker-1"}));
  ClusterPlan shrunk = decideOn(cluster(1), sharedPods(pods), true);
  EXPECT_EQ(shrunk.deletePods, (std::vector<std::string>{"c1-gpu-worker-1"}));
}

// The autoscaler's scaleStrategy.workersToDelete: exactly those Pods go (not the highest index),
// a replacement takes the lowest free index not on the list when replicas did not drop, and a
// name that is not
// this group's worker is left alone (KubeRay would delete any Pod of that name).
TEST(RayClusterDecideTest, WorkersToDeleteAreTheOnesDeleted) {
  std::vector<json> pods{pod("c1-head", true), pod("c1-gpu-worker-0", true),
                         pod("c1-gpu-worker-1", true), pod("c1-gpu-worker-2", true),
                         pod("someone-elses-pod", true)};
  json scaledDown = cluster(2);
  scaledDown["spec"]["workerGroupSpecs"][0]["scaleStrategy"]["workersToDelete"] =
      json::array({"c1-gpu-worker-1", "someone-elses-pod"});
  ClusterPlan plan = decideOn(scaledDown, sharedPods(pods), true);
  EXPECT_EQ(plan.deletePods, std::vector<std::string>{"c1-gpu-worker-1"});
  EXPECT_TRUE(plan.creates.empty());
  json same = cluster(3);
  same["spec"]["workerGroupSpecs"][0]["scaleStrategy"]["workersToDelete"] =
      json::array({"c1-gpu-worker-0"});
  pods.erase(pods.begin() + 1);  // worker-0 is gone
  ClusterPlan refill = decideOn(same, sharedPods(pods), true);
  EXPECT_TRUE(refill.deletePods.empty());
  // Not worker-0 again: the autoscaler's list still names it.
  EXPECT_EQ(createdNames(refill), std::vector<std::string>{"Pod c1-gpu-worker-3"});
}

TEST(RayClusterDecideTest, NothingWhileBeingDeleted) {
  json c = cluster();
  c["metadata"]["deletionTimestamp"] = "2026-11-30T00:00:00Z";
  ClusterPlan plan = decideOn(c, {}, false);
  EXPECT_TRUE(plan.creates.empty());
  EXPECT_TRUE(plan.status == nullptr);
}

}  // namespace
}  // namespace rayjournal::controller

namespace rayjournal::controller {
namespace {

TEST(RayClusterDecideTest, ReplicasAreClampedToMinAndMaxTimesHosts) {
  json group{{"groupName", "g"}, {"replicas", 10}, {"minReplicas", 1}, {"maxReplicas", 4}};
  EXPECT_EQ(desiredWorkers(group), 4);
  group["replicas"] = 0;
  EXPECT_EQ(desiredWorkers(group), 1);
  group["numOfHosts"] = 3;
  EXPECT_EQ(desiredWorkers(group), 3);
  group["suspend"] = true;
  EXPECT_EQ(desiredWorkers(group), 0);
}

TEST(RayClusterDecideTest, OverflowingReplicasSaturateInsteadOfWrapping) {
  json group{{"groupName", "g"}, {"replicas", int64_t(1) << 40}, {"numOfHosts", int64_t(1) << 40}};
  EXPECT_EQ(desiredWorkers(group), kMaxDesiredPodsPerGroup);
  group["replicas"] = -5;
  EXPECT_EQ(desiredWorkers(group), 0);
}

// One RayCluster asking for a million workers must not plan a million Pods in one reconcile.
TEST(RayClusterDecideTest, AMillionReplicasArePlannedInBoundedBatches) {
  json c = cluster(1000000);
  ClusterPlan plan = decideOn(c, {}, true);
  EXPECT_EQ(plan.creates.size(), kMaxPodCreatesPerReconcile);
  EXPECT_TRUE(plan.more);
  EXPECT_EQ((*plan.status)["desiredWorkerReplicas"], 1000000);
}

TEST(RayClusterDecideTest, AUserPodWithAnUnparseableNameIsForeign) {
  std::vector<json> pods{pod("c1-head", true), pod("c1-gpu-worker-0", true),
                         pod("c1-gpu-worker-1", true), pod("c1-gpu-worker-99999999999999999999", true),
                         pod("c1-gpu-worker-x", true)};
  ClusterPlan plan = decideOn(cluster(), sharedPods(pods), true);
  EXPECT_TRUE(plan.deletePods.empty()) << "foreign Pods are left alone";
  EXPECT_TRUE(plan.creates.empty());
}

TEST(RayClusterDecideTest, CustomHeadServiceNameIsHonoured) {
  json c = cluster();
  c["spec"]["headGroupSpec"]["headService"] = {{"metadata", {{"name", "my-head"}}}};
  ClusterPlan plan = decideOn(c, {}, false);
  EXPECT_EQ((*plan.creates[0].second)["metadata"]["name"], "my-head");
  std::vector<json> pods{pod("c1-head", true), pod("c1-gpu-worker-0", true),
                         pod("c1-gpu-worker-1", true)};
  ClusterPlan next = decideOn(c, sharedPods(pods), true);
  ASSERT_TRUE(next.status != nullptr);
  EXPECT_EQ((*next.status)["head"]["serviceName"], "my-head");
}

json failedPod(const std::string& name, const std::string& phase) {
  json p = pod(name, false);
  p["status"] = {{"phase", phase}};
  return p;
}

// KubeRay's reconcilePods: a Failed or Succeeded Pod (or a Running one whose Ray container ended
// under restartPolicy Never) is deleted, and created again under its name once it is gone.
TEST(RayClusterDecideTest, AFailedHeadOrWorkerIsDeletedThenCreatedAgainUnderItsName) {
  json c = cluster(1);
  ClusterPlan failed =
      decideOn(c, sharedPods({failedPod("c1-head", "Failed"), failedPod("c1-gpu-worker-0", "Succeeded")}),
               true);
  EXPECT_EQ(failed.deletePods, (std::vector<std::string>{"c1-head", "c1-gpu-worker-0"}));
  EXPECT_TRUE(failed.creates.empty()) << "not while the old Pods hold their names";
  json deleting = failedPod("c1-head", "Failed");
  deleting["metadata"]["deletionTimestamp"] = "2026-12-01T00:00:00Z";
  EXPECT_TRUE(decideOn(c, sharedPods({deleting, pod("c1-gpu-worker-0", true)}), true).deletePods.empty())
      << "asked once";
  ClusterPlan gone = decideOn(c, sharedPods({pod("c1-gpu-worker-0", true)}), true);
  EXPECT_EQ(createdNames(gone), std::vector<std::string>{"Pod c1-head"});
  json exited = pod("c1-gpu-worker-0", true);
  exited["spec"] = {{"restartPolicy", "Never"}, {"containers", json::array({{{"name", "w"}}})}};
  exited["status"]["containerStatuses"] =
      json::array({{{"name", "w"}, {"state", {{"terminated", {{"exitCode", 1}}}}}}});
  ClusterPlan rayExited = decideOn(c, sharedPods({pod("c1-head", true), exited}), true);
  EXPECT_EQ(rayExited.deletePods, std::vector<std::string>{"c1-gpu-worker-0"});
}

TEST(RayClusterDecideTest, AProvisionedSidecarHeadIsNotCreatedAgain) {
  json c = cluster(0);
  c["metadata"]["annotations"] = {{"ray.io/disable-provisioned-head-restart", "true"}};
  c["status"]["conditions"] =
      json::array({{{"type", "RayClusterProvisioned"}, {"status", "True"}}});
  ClusterPlan failed = decideOn(c, sharedPods({failedPod("c1-head", "Failed")}), true);
  EXPECT_EQ(failed.deletePods, std::vector<std::string>{"c1-head"});
  EXPECT_TRUE(decideOn(c, {}, true).creates.empty());
}

}  // namespace
}  // namespace rayjournal::controller

namespace rayjournal::controller {
namespace {

// The informer cache keeps a slim Pod (CachedPod.h): every decision reads the same from it as
// from the whole Pod, or a field the decision needs was cut away.
TEST(RayClusterDecideTest, ACachedPodDecidesAsTheWholePod) {
  json c = cluster(2);
  ClusterObserved o = clusterObserved(std::make_shared<const json>(c), std::vector<PodView>{}, nullptr);
  json head = *headPodFor(o.cluster);
  head["status"] = pod("c1-head", true)["status"];
  head["status"]["podIP"] = "10.0.0.9";
  json exited = *workerPodFor(o.cluster, o.cluster.groups[0], "c1-gpu-worker-0", 0);
  exited["spec"]["restartPolicy"] = "Never";
  exited["status"] = {{"phase", "Running"},
                      {"containerStatuses",
                       json::array({{{"name", "w"}, {"state", {{"terminated", {{"exitCode", 1}}}}}}})}};
  json deleting = *workerPodFor(o.cluster, o.cluster.groups[0], "c1-gpu-worker-1", 1);
  deleting["metadata"]["deletionTimestamp"] = "2026-12-01T00:00:00Z";
  deleting["metadata"]["managedFields"] = json::array({{{"manager", "kubelet"}}});
  Pods whole = sharedPods({head, exited, deleting});
  Pods cached;
  for (const auto& p : whole) cached.push_back(podAsCached(p));
  EXPECT_LT(cached[0]->dump().size() * 3, whole[0]->dump().size()) << "most of a Pod is not kept";
  ClusterPlan fromWhole = decideOn(c, whole, true), fromCached = decideOn(c, cached, true);
  EXPECT_EQ(fromCached.deletePods, fromWhole.deletePods);
  EXPECT_EQ(createdNames(fromCached), createdNames(fromWhole));
  ASSERT_TRUE(fromWhole.status && fromCached.status);
  EXPECT_EQ(*fromCached.status, *fromWhole.status);
  EXPECT_FALSE(cached[2]->at("metadata").contains("managedFields"));
}

// The SidecarSubmitterRestart decision reads the submitter container's restart count and last
// ending; the cache once cut them away and a sidecar failing for ever never failed its RayJob.
TEST(RayClusterDecideTest, ACachedHeadPodKeepsTheSidecarsRestarts) {
  json head = {{"apiVersion", "v1"},
               {"kind", "Pod"},
               {"metadata", {{"name", "c-head"}, {"namespace", "default"}}},
               {"status",
                {{"phase", "Running"},
                 {"containerStatuses",
                  json::array({{{"name", "ray-job-submitter"},
                                {"restartCount", 2},
                                {"lastState", {{"terminated", {{"exitCode", 1}, {"reason", "Error"}}}}},
                                {"state", {{"running", {{"startedAt", "2026-12-01T00:00:00Z"}}}}}}})}}}};
  HeadPodView whole = headPodView(head);
  HeadPodView cached = headPodView(*podAsCached(std::make_shared<const json>(head)));
  EXPECT_EQ(whole.restartCount, 2);
  EXPECT_TRUE(whole.terminatedBefore);
  EXPECT_EQ(cached.restartCount, whole.restartCount);
  EXPECT_EQ(cached.terminatedBefore, whole.terminatedBefore);
}

// The embedded GCS store (reconcileGCSStoragePVC): the operator's claim is created in the same
// pass as, and before, the head Pod that mounts it; found, it is not created again, and a spec
// it no longer matches is a Warning (claims are not changed in place). A user's claim is never
// created; missing, it is a Warning and the head waits for it.
ClusterObserved embeddedObserved(json storage, GcsStorageClaim found) {
  json c = cluster();
  c["spec"]["gcsFaultToleranceOptions"] = {{"backend", "rocksdb"}};
  if (!storage.is_null()) c["spec"]["gcsFaultToleranceOptions"]["storage"] = storage;
  ClusterContext context;
  context.gates.gcsFaultToleranceEmbeddedStorage = true;
  ClusterObserved o = clusterObserved(std::make_shared<const json>(c), Pods{}, nullptr, context);
  o.gcsStorageClaim = std::move(found);
  return o;
}

TEST(RayClusterDecideTest, TheEmbeddedStoresClaimIsCreatedBeforeTheHeadPodThatMountsIt) {
  ClusterPlan plan = decideRayCluster(embeddedObserved(nullptr, {false, ""}));
  EXPECT_EQ(createdNames(plan),
            (std::vector<std::string>{"Service c1-head-svc", "PersistentVolumeClaim c1-gcs-pvc",
                                      "Pod c1-head", "Pod c1-gpu-worker-0", "Pod c1-gpu-worker-1"}));
  EXPECT_TRUE(plan.warnings.empty());
  plan = decideRayCluster(embeddedObserved(nullptr, {true, ""}));
  EXPECT_EQ(createdNames(plan)[1], "Pod c1-head") << "a claim that exists is not created again";
  plan = decideRayCluster(embeddedObserved(json{{"size", "2Gi"}}, {true, "requested size 2Gi != current 1Gi"}));
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_EQ(plan.warnings[0].reason, "FailedToCreatePVC");
  EXPECT_EQ(plan.warnings[0].message,
            "GCS storage PVC ns/c1-gcs-pvc already exists and cannot be reconfigured in place "
            "(requested size 2Gi != current 1Gi); delete the PVC to recreate it with the new settings");
}

TEST(RayClusterDecideTest, AUsersMissingClaimIsNeverCreatedButReported) {
  ClusterPlan plan = decideRayCluster(embeddedObserved(json{{"claimName", "kept"}}, {false, ""}));
  EXPECT_EQ(createdNames(plan)[1], "Pod c1-head");
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_EQ(plan.warnings[0].message,
            "GcsFaultToleranceOptions.Storage.ClaimName \"kept\" not found in namespace ns; the head "
            "Pod will not start until it exists");
  EXPECT_TRUE(decideRayCluster(embeddedObserved(json{{"claimName", "kept"}}, {true, ""})).warnings.empty());
}

// KubeRay validates a RayCluster before anything else and leaves an invalid one alone with a
// Warning; before, rayjournal validated only a RayJob's rayClusterSpec, so a RayCluster created
// directly with the embedded store and the gate off got Pods without it.
TEST(RayClusterDecideTest, AnInvalidRayClusterGetsAWarningAndNoObjects) {
  json c = cluster();
  c["spec"]["gcsFaultToleranceOptions"] = {{"backend", "rocksdb"}};
  ClusterPlan plan = decideOn(c);
  EXPECT_TRUE(plan.creates.empty());
  EXPECT_FALSE(plan.status);
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_EQ(plan.warnings[0].reason, "InvalidRayClusterSpec");
  EXPECT_EQ(plan.warnings[0].message,
            "The RayCluster spec is invalid ns/c1: the embedded RocksDB GCS fault tolerance backend "
            "(GcsFaultToleranceOptions.Backend: 'rocksdb') requires the "
            "GCSFaultToleranceEmbeddedStorage feature gate to be enabled");
  c = cluster();
  c["metadata"]["name"] = std::string(54, 'a');
  plan = decideOn(c);
  EXPECT_TRUE(plan.creates.empty());
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_EQ(plan.warnings[0].reason, "InvalidRayClusterMetadata");
  EXPECT_EQ(plan.warnings[0].message, "The RayCluster metadata is invalid ns/" + std::string(54, 'a') +
                                          ": RayCluster name should be no more than 53 characters");
}

// KubeRay's ValidateRayClusterStatus: both suspension conditions True (another writer's doing)
// stops the cluster's reconcile with a Warning, looked at again a moment later.
TEST(RayClusterDecideTest, BothSuspensionConditionsTrueIsAnInvalidStatus) {
  json c = cluster();
  c["status"]["conditions"] = {{{"type", "RayClusterSuspending"}, {"status", "True"}},
                               {{"type", "RayClusterSuspended"}, {"status", "True"}}};
  ClusterPlan plan = decideOn(c);
  EXPECT_TRUE(plan.creates.empty());
  EXPECT_TRUE(plan.deletePods.empty());
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_EQ(plan.warnings[0].reason, "InvalidRayClusterStatus");
  EXPECT_EQ(plan.warnings[0].message,
            "The RayCluster status is invalid ns/c1, invalid RayCluster State: "
            "rayv1.RayClusterSuspending and rayv1.RayClusterSuspended conditions should not be both true");
  EXPECT_EQ(plan.retryAfterMs, kInvalidStatusRetryMs);
}

}  // namespace
}  // namespace rayjournal::controller
