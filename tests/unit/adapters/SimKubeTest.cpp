// The simulated API server's semantics that the controller and the simulator rely on.
#include <gtest/gtest.h>

#include <fstream>

#include "adapters/sim/SimKube.h"
#include "support/TempDir.h"

namespace rayjournal::sim {
namespace {

json object(const std::string& name, const json& owners = json::array()) {
  return {{"metadata", {{"name", name}, {"namespace", "default"}, {"ownerReferences", owners}}},
          {"spec", {{"x", 1}}}};
}

TEST(SimKubeTest, CreateConflictAndGeneration) {
  ManualClock clock;
  SimKube kube(clock);
  json created = *kube.create("RayJob", object("a"));
  EXPECT_THROW(kube.create("RayJob", object("a")), kube::ApiError);
  json stale = created;
  created["spec"]["x"] = 2;
  json updated = *kube.update("RayJob", created);
  EXPECT_EQ(updated["metadata"]["generation"], 2);
  try {
    kube.update("RayJob", stale);
    FAIL() << "stale resourceVersion accepted";
  } catch (const kube::ApiError& e) {
    EXPECT_TRUE(e.conflict());
  }
  json status = updated;
  status["status"] = {{"phase", "x"}};
  json afterStatus = *kube.updateStatus("RayJob", status);
  EXPECT_EQ(afterStatus["metadata"]["generation"], 2) << "status writes do not bump generation";
}

// An update is of the spec and metadata: the status the server holds stays, whatever the request
// carries, and an update that leaves the spec as it was keeps the generation.
TEST(SimKubeTest, AnUpdateKeepsTheStoredStatusAndCountsOnlySpecChanges) {
  ManualClock clock;
  SimKube kube(clock);
  kube.create("RayJob", object("a"));
  json withStatus = *kube.get("RayJob", "default", "a");
  withStatus["status"] = {{"phase", "Running"}};
  json stored = *kube.updateStatus("RayJob", withStatus);
  stored["status"] = {{"phase", "Forged"}};
  stored["metadata"]["labels"] = {{"l", "v"}};
  json relabelled = *kube.update("RayJob", stored);
  EXPECT_EQ(relabelled["status"]["phase"], "Running");
  EXPECT_EQ(relabelled["metadata"]["labels"]["l"], "v");
  EXPECT_EQ(relabelled["metadata"]["generation"], 1) << "the spec did not change";
  relabelled.erase("status");
  relabelled["spec"]["x"] = 3;
  json changed = *kube.update("RayJob", relabelled);
  EXPECT_EQ(changed["status"]["phase"], "Running") << "a request without status keeps it too";
  EXPECT_EQ(changed["metadata"]["generation"], 2);
  EXPECT_EQ(*kube.get("RayJob", "default", "a"), changed);
}

// What a benchmark reports the simulated cluster holding: objects and bytes by kind, the bytes
// the same as storedBytes() counts.
TEST(SimKubeTest, StoredByKindCountsEachKindsObjectsAndBytes) {
  ManualClock clock;
  SimKube kube(clock);
  kube.create("RayJob", object("a"));
  kube.create("Service", object("s1"));
  kube.create("Service", object("s2"));
  auto held = kube.storedByKind();
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held["RayJob"].first, 1u);
  EXPECT_EQ(held["Service"].first, 2u);
  EXPECT_EQ(held["RayJob"].second + held["Service"].second, kube.storedBytes());
  kube.remove("Service", "default", "s1");
  EXPECT_EQ(kube.storedByKind()["Service"].first, 1u);
}

// A write's encoded answer is the version the server stored: the bytes its watch event carries
// (one encoding, shared with a cache in front), and they decode to the answer.
TEST(SimKubeTest, EncodedAnswersAreTheBytesTheServerStored) {
  ManualClock clock;
  SimKube kube(clock);
  std::vector<kube::Packed> heard;
  kube.watchPacked("RayJob", [&](kube::WatchEventType, const kube::Snapshot&,
                                 const kube::Packed& p) { heard.push_back(p); });
  kube::KubeClient::Encoded created = kube.createEncoded("RayJob", object("a"));
  json changed = *created.object;
  changed["spec"]["x"] = 2;
  kube::KubeClient::Encoded updated = kube.updateEncoded("RayJob", changed);
  json status = *updated.object;
  status["status"] = {{"phase", "x"}};
  kube::KubeClient::Encoded written = kube.updateStatusEncoded("RayJob", status);
  ASSERT_EQ(heard.size(), 3u);
  int i = 0;
  for (const auto* answer : {&created, &updated, &written}) {
    ASSERT_TRUE(answer->object && answer->packed);
    EXPECT_EQ(answer->packed, heard[i++]) << "the watch event's bytes";
    EXPECT_EQ(json::from_cbor(*answer->packed), *answer->object);
  }
  EXPECT_EQ((*written.object)["spec"]["x"], 2);
  EXPECT_EQ((*written.object)["status"]["phase"], "x");
  EXPECT_EQ(*kube.get("RayJob", "default", "a"), *written.object);
}

// As an API server: generateName gets five random characters, a given name wins, and an object
// with neither is refused naming both fields.
TEST(SimKubeTest, GenerateNameIsCompletedByTheServer) {
  ManualClock clock;
  SimKube kube(clock);
  json generated{{"metadata", {{"generateName", "rayjob-sample-"}, {"namespace", "default"}}}};
  std::string a = (*kube.create("RayJob", generated))["metadata"]["name"];
  std::string b = (*kube.create("RayJob", generated))["metadata"]["name"];
  EXPECT_EQ(a.rfind("rayjob-sample-", 0), 0u) << a;
  EXPECT_EQ(a.size(), std::string("rayjob-sample-").size() + 5);
  EXPECT_NE(a, b);
  EXPECT_TRUE(kube.get("RayJob", "default", b));
  json named = generated;
  named["metadata"]["name"] = "fixed";
  EXPECT_EQ((*kube.create("RayJob", named))["metadata"]["name"], "fixed");
  try {
    kube.create("RayJob", {{"metadata", {{"namespace", "default"}}}});
    FAIL() << "created an object without a name";
  } catch (const kube::ApiError& e) {
    EXPECT_EQ(e.code(), 422);
    EXPECT_NE(std::string(e.what()).find("generateName"), std::string::npos) << e.what();
  }
}

// Objects are stored serialized: what a read returns equals what was written (numbers, nesting
// and all), a snapshot handed out never changes under a later write, and the store holds bytes.
TEST(SimKubeTest, ObjectsAreStoredAsBytesAndReadBackUnchanged) {
  ManualClock clock;
  SimKube kube(clock);
  json rich = object("a");
  rich["spec"] = {{"n", -3}, {"big", 1ull << 40}, {"f", 0.25}, {"on", true}, {"none", nullptr},
                  {"list", {1, "two", {{"three", 3}}}}, {"text", "caf\u00e9"}};
  kube::Snapshot first = kube.create("RayJob", rich);
  json changed = *first;
  changed["spec"]["n"] = 4;
  kube.update("RayJob", changed);
  EXPECT_EQ((*first)["spec"]["n"], -3) << "a snapshot handed out never changes";
  first.reset();
  json read = *kube.get("RayJob", "default", "a");
  json expected = rich["spec"];
  expected["n"] = 4;
  EXPECT_EQ(read["spec"], expected);
  EXPECT_EQ(read["spec"].dump(), expected.dump());
  EXPECT_GT(kube.storedBytes(), 0u);
  EXPECT_LT(kube.storedBytes(), read.dump().size()) << "CBOR, not a tree or its JSON";
  kube.remove("RayJob", "default", "a");
  EXPECT_EQ(kube.storedBytes(), 0u);
}

TEST(SimKubeTest, FinalizersHoldDeletionAndOwnersCascade) {
  ManualClock clock;
  SimKube kube(clock);
  json owner = object("owner");
  owner["metadata"]["finalizers"] = json::array({"f"});
  owner = *kube.create("RayJob", owner);
  kube.create("RayCluster", object("child", json::array({{{"kind", "RayJob"},
                                                          {"name", "owner"},
                                                          {"uid", owner["metadata"]["uid"]},
                                                          {"controller", true}}})));
  kube.remove("RayJob", "default", "owner");
  auto held = kube.get("RayJob", "default", "owner");
  ASSERT_TRUE(held);
  EXPECT_TRUE((*held)["metadata"].contains("deletionTimestamp"));
  EXPECT_TRUE(kube.get("RayCluster", "default", "child"));
  (*held)["metadata"]["finalizers"] = json::array();
  kube.update("RayJob", *held);
  EXPECT_FALSE(kube.get("RayJob", "default", "owner"));
  EXPECT_FALSE(kube.get("RayCluster", "default", "child")) << "dependents are garbage-collected";
}

// The simulated RayCluster controller reads a cluster's Pods by owner (an index), not by
// scanning every Pod: the scan made the simulator quadratic in the number of clusters.
TEST(SimKubeTest, ListOwnedUsesTheOwnerIndex) {
  ManualClock clock;
  SimKube kube(clock);
  json owner = *kube.create("RayCluster", object("c"));
  json ref = json::array({{{"kind", "RayCluster"},
                           {"name", "c"},
                           {"uid", owner["metadata"]["uid"]},
                           {"controller", true}}});
  kube.create("Pod", object("c-head", ref));
  kube.create("Pod", object("other"));
  kube.create("Service", object("c-head-svc", ref));
  auto pods = kube.listOwned("Pod", "", owner["metadata"]["uid"]);
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ((*pods[0])["metadata"]["name"], "c-head");
  kube.remove("Pod", "default", "c-head");
  EXPECT_TRUE(kube.listOwned("Pod", "", owner["metadata"]["uid"]).empty());
}

// A process killed between persisting an object and appending its create to history.jsonl
// (found by crash.kill9_embedded): the next start restores the missing history line, once.
TEST(SimKubeTest, CreateHistoryIsRepairedFromTheObjectLogAfterAKill) {
  testing::TempDir dir;
  ManualClock clock;
  {
    SimKube kube(clock, dir.path());
    kube.create("RayCluster", object("kept"));
    kube.create("RayCluster", object("lost-line"));
  }
  auto historyLines = [&] {
    std::ifstream in(dir.sub("history.jsonl"));
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  };
  auto lines = historyLines();
  ASSERT_EQ(lines.size(), 2u);
  std::ofstream(dir.sub("history.jsonl"), std::ios::trunc) << lines[0] << "\n";  // the kill
  { SimKube reopened(clock, dir.path()); }
  { SimKube again(clock, dir.path()); }
  lines = historyLines();
  ASSERT_EQ(lines.size(), 2u) << "restored exactly once";
  EXPECT_EQ(json::parse(lines[1])["name"], "lost-line");
}

TEST(SimKubeTest, OrphanPropagationKeepsDependents) {
  ManualClock clock;
  SimKube kube(clock);
  json owner = *kube.create("RayJob", object("owner"));
  kube.create("RayCluster", object("child", json::array({{{"kind", "RayJob"},
                                                          {"name", "owner"},
                                                          {"uid", owner["metadata"]["uid"]}}})));
  kube.remove("RayJob", "default", "owner", kube::Propagation::Orphan);
  auto child = kube.get("RayCluster", "default", "child");
  ASSERT_TRUE(child);
  EXPECT_TRUE((*child)["metadata"]["ownerReferences"].empty());
}

TEST(SimKubeTest, LostResponseStillAppliesAndNotifiesWatchers) {
  ManualClock clock;
  SimKube kube(clock);
  int added = 0;
  kube.watch("Pod", [&](kube::WatchEventType type, const json&) {
    added += type == kube::WatchEventType::Added;
  });
  kube.injectFault({"create", "Pod", 1, 504, "Timeout", true});
  EXPECT_THROW(kube.create("Pod", object("p")), kube::ApiError);
  EXPECT_TRUE(kube.get("Pod", "default", "p")) << "the write was applied";
  EXPECT_EQ(added, 1) << "watchers saw it although the response was lost";
}

}  // namespace
}  // namespace rayjournal::sim
