// A RayCluster on the embedded GCS store (gcsFaultToleranceOptions.backend: rocksdb) on the
// Stack: the claim "<cluster>-gcs-pvc" is a journaled intent before the head Pod that mounts it
// (the simulated kubelet leaves a Pod Pending while its claim is missing), made once whatever a
// crash interrupts, and garbage-collected with the cluster; with the gate off the cluster is
// refused as KubeRay refuses it, with nothing made.
#include <gtest/gtest.h>

#include "controller/Executor.h"
#include "support/MinimalRayCluster.h"
#include "support/SimHarness.h"

namespace rayjournal::testing {
namespace {

json embeddedRayCluster(const std::string& name) {
  return minimalRayCluster(
      name, {{"gcsFaultToleranceOptions", {{"backend", "rocksdb"}, {"storage", {{"size", "2Gi"}}}}}});
}

int claimsCreated(SimHarness& h) {
  int n = 0;
  for (const auto& c : h.kube.createHistory()) n += c["kind"] == "PersistentVolumeClaim";
  return n;
}

bool ready(SimHarness& h, const std::string& name) {
  auto c = h.kube.get("RayCluster", "default", name);
  return c && (*c).value("status", json::object()).value("state", "") == "ready";
}

void enableEmbeddedStorage(SimHarness& h) {
  h.config.gates.gcsFaultToleranceEmbeddedStorage = true;
  h.restart();
}

TEST(GcsEmbeddedStorageTest, TheClaimIsMadeBeforeTheHeadAndGoesWithTheCluster) {
  SimHarness h;
  enableEmbeddedStorage(h);
  h.kube.create("RayCluster", embeddedRayCluster("emb"));
  ASSERT_TRUE(h.runUntil([&] { return ready(h, "emb"); }));
  auto claim = h.kube.get("PersistentVolumeClaim", "default", "emb-gcs-pvc");
  ASSERT_TRUE(claim);
  EXPECT_EQ((*claim)["spec"]["resources"]["requests"]["storage"], "2Gi");
  EXPECT_EQ((*claim)["metadata"]["ownerReferences"][0]["name"], "emb");
  EXPECT_TRUE(h.anyEvent("CreatedPVC", "Created GCS storage PVC default/emb-gcs-pvc"));
  EXPECT_EQ(claimsCreated(h), 1);
  h.kube.remove("RayCluster", "default", "emb");
  ASSERT_TRUE(h.runUntil([&] { return !h.kube.get("RayCluster", "default", "emb"); }));
  EXPECT_FALSE(h.kube.get("PersistentVolumeClaim", "default", "emb-gcs-pvc"));
}

// A kill -9 right after the claim's intent is durable, and right after the create ran: the
// restarted operator resolves the intent from the API server and the cluster gets one claim.
TEST(GcsEmbeddedStorageTest, ACrashAroundTheClaimsCreateMakesItOnce) {
  using Stage = controller::Executor::Stage;
  for (Stage stage : {Stage::IntentDurable, Stage::Executed}) {
    SCOPED_TRACE(stage == Stage::Executed ? "executed" : "durable");
    SimHarness h;
    enableEmbeddedStorage(h);
    h.kube.create("RayCluster", embeddedRayCluster("crash"));
    ASSERT_TRUE(h.stepUntilCrash(stage, controller::Action::CreatePersistentVolumeClaim));
    h.restart();
    ASSERT_TRUE(h.runUntil([&] { return ready(h, "crash"); }));
    EXPECT_EQ(claimsCreated(h), 1) << "a second create would have been refused or duplicated";
    EXPECT_TRUE(h.kube.get("PersistentVolumeClaim", "default", "crash-gcs-pvc"));
  }
}

TEST(GcsEmbeddedStorageTest, WithTheGateOffTheClusterIsRefusedAndNothingIsMade) {
  SimHarness h;
  h.kube.create("RayCluster", embeddedRayCluster("off"));
  for (int i = 0; i < 50; ++i) h.step();
  EXPECT_TRUE(h.kube.list("Pod", "default").empty());
  EXPECT_EQ(claimsCreated(h), 0);
  EXPECT_TRUE(h.anyEvent("InvalidRayClusterSpec",
                         "The RayCluster spec is invalid default/off: the embedded RocksDB GCS fault "
                         "tolerance backend (GcsFaultToleranceOptions.Backend: 'rocksdb') requires the "
                         "GCSFaultToleranceEmbeddedStorage feature gate to be enabled"));
}

}  // namespace
}  // namespace rayjournal::testing
