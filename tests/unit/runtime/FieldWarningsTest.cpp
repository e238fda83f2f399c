// A KubeRay field rayjournal does not implement is never ignored in silence: the RayCluster (and
// a RayJob whose rayClusterSpec sets it) gets one Warning Event and one FieldIgnored journal
// record per field, not one per reconcile, and not again after a restart.
#include <gtest/gtest.h>

#include "events/EventCodec.h"
#include "support/SimHarness.h"

namespace rayjournal::testing {
namespace {

int fieldIgnoredRecords(SimHarness& h, const std::string& kind, const std::string& path) {
  int n = 0;
  for (const auto& r : h.records()) {
    if (r.type != wal::RecordType::Observation || r.object.kind != kind) continue;
    auto o = events::decodeObservation(r);
    const auto* ignored = o ? std::get_if<events::FieldIgnored>(&*o) : nullptr;
    n += ignored && ignored->path == path;
  }
  return n;
}

int warnings(SimHarness& h, const std::string& fragment) {
  int n = 0;
  for (const auto& e : h.kube.list("Event", "default"))
    n += e.value("reason", "") == "FieldNotImplemented" &&
         e.value("note", "").find(fragment) != std::string::npos;
  return n;
}

TEST(FieldWarningsTest, AnUnimplementedFieldIsWarnedOncePerObjectAcrossRestarts) {
  SimHarness h;
  json job = sampleRayJob("np");
  job["spec"]["rayClusterSpec"]["networkPolicy"] = {{"mode", "DenyAll"}};
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("np") == "Running"; }));
  h.restart();
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("np") == "Complete"; }));
  EXPECT_EQ(fieldIgnoredRecords(h, "RayJob", "spec.rayClusterSpec.networkPolicy"), 1);
  EXPECT_EQ(fieldIgnoredRecords(h, "RayCluster", "spec.networkPolicy"), 1);
  EXPECT_EQ(warnings(h, "spec.rayClusterSpec.networkPolicy is set, but rayjournal does not implement it: "
                        "no NetworkPolicy is created"), 1);
  EXPECT_EQ(warnings(h, "spec.networkPolicy is set"), 1) << "the RayCluster's own";
}

TEST(FieldWarningsTest, AnObjectThatSetsNothingUnimplementedHearsNothing) {
  SimHarness h;
  h.apply(sampleRayJob("plain"));
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("plain") == "Complete"; }));
  EXPECT_EQ(warnings(h, ""), 0);
}

}  // namespace
}  // namespace rayjournal::testing
