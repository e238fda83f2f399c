// The simulated API server's stored form: bytes that decode to the object, and the metadata the
// server reads without decoding them.
#include "adapters/sim/StoredObject.h"

#include <gtest/gtest.h>

namespace rayjournal::sim {
namespace {

kube::json pod() {
  return {{"metadata",
           {{"name", "p"},
            {"namespace", "ns"},
            {"uid", "u-1"},
            {"resourceVersion", "42"},
            {"labels", {{"ray.io/cluster", "c"}, {"ray.io/node-type", "head"}, {"n", 1}}},
            {"ownerReferences", {{{"kind", "RayCluster"}, {"uid", "owner-1"}},
                                 {{"kind", "Other"}, {"uid", "owner-2"}}}},
            {"finalizers", {"f"}}}},
          {"spec", {{"containers", {{{"name", "ray"}, {"cpu", 1.5}}}}}}};
}

TEST(StoredObjectTest, TheBytesDecodeToTheObjectStored) {
  StoredObject stored("Pod", pod());
  EXPECT_EQ(stored.kind(), "Pod");
  EXPECT_EQ(stored.decode(), pod());
  EXPECT_EQ(stored.decode().dump(), pod().dump());
  EXPECT_EQ(stored.bytes(), kube::json::to_cbor(pod()).size());
}

// The store holds a copy of every live object: the encoder's spare capacity (it grows by
// doubling) was half as much again as the bytes themselves.
TEST(StoredObjectTest, TheBytesAreKeptWithoutSpareCapacity) {
  kube::json large = pod();
  for (int i = 0; i < 50; ++i) large["spec"]["env"].push_back({{"name", "V" + std::to_string(i)}});
  ASSERT_GT(kube::json::to_cbor(large).capacity(), kube::json::to_cbor(large).size())
      << "the encoder leaves spare capacity to take away";
  StoredObject stored("Pod", large);
  EXPECT_EQ(stored.packed()->capacity(), stored.bytes());
}

TEST(StoredObjectTest, ItsMetadataIsReadWithoutDecoding) {
  StoredObject stored("Pod", pod());
  EXPECT_EQ(stored.resourceVersion(), "42");
  EXPECT_EQ(stored.uid(), "u-1");
  EXPECT_EQ(stored.ownerUids(), (std::vector<std::string>{"owner-1", "owner-2"}));
  EXPECT_TRUE(stored.hasFinalizers());
  EXPECT_FALSE(stored.deleting());
  EXPECT_TRUE(stored.hasLabels({}));
  EXPECT_TRUE(stored.hasLabels({{"ray.io/cluster", "c"}, {"ray.io/node-type", "head"}}));
  EXPECT_FALSE(stored.hasLabels({{"ray.io/cluster", "d"}}));
  EXPECT_FALSE(stored.hasLabels({{"absent", "c"}}));
  EXPECT_FALSE(stored.hasLabels({{"n", "1"}})) << "a label that is not a string never matches";
  kube::json gone = pod();
  gone["metadata"]["finalizers"] = kube::json::array();
  gone["metadata"]["deletionTimestamp"] = "2026-12-05T00:00:00Z";
  StoredObject deleting("Pod", gone);
  EXPECT_FALSE(deleting.hasFinalizers());
  EXPECT_TRUE(deleting.deleting());
}

TEST(StoredObjectTest, AHeldSnapshotIsSharedAndAReleasedOneDecoded) {
  StoredObject stored("Pod", pod());
  auto held = std::make_shared<const kube::json>(pod());
  stored.shareWhileHeld(held);
  EXPECT_EQ(stored.handle().snapshot().get(), held.get());
  held.reset();
  kube::Snapshot decoded = stored.handle().snapshot();
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, pod());
}

TEST(StoredObjectTest, MetadataOfTheWrongTypeIsLeftEmpty) {
  StoredObject stored("Pod", {{"metadata", {{"uid", 7}, {"labels", "x"}, {"finalizers", "f"}}}});
  EXPECT_EQ(stored.uid(), "");
  EXPECT_TRUE(stored.ownerUids().empty());
  EXPECT_FALSE(stored.hasFinalizers());
  EXPECT_FALSE(stored.hasLabels({{"a", "b"}}));
}

}  // namespace
}  // namespace rayjournal::sim
