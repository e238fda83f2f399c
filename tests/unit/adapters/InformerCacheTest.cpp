// The informer cache over the simulated API server: reads come from memory, writes are
// visible at once, watch listeners see the cached objects first, live reads bypass it.
#include <gtest/gtest.h>

#include "adapters/CountingClients.h"
#include "adapters/kube/InformerCache.h"
#include "adapters/sim/SimKube.h"

namespace rayjournal::kube {
namespace {

json object(const std::string& name, json labels = json::object()) {
  return {{"metadata", {{"name", name}, {"namespace", "ns"}, {"labels", labels}}},
          {"spec", {{"x", 1}}}};
}

struct Fixture {
  ManualClock clock;
  sim::SimKube server{clock};
  CallCounter calls;
  CountingKubeClient counted{server, calls};
  InformerCache cache{counted, {"RayJob", "Pod"}};
  uint64_t apiGets() {
    uint64_t n = 0;
    for (const auto& [key, count] : calls.byOutcome()) {
      if (std::get<0>(key) == "get" || std::get<0>(key) == "list") n += count;
    }
    return n;
  }
};

TEST(InformerCacheTest, ReadsComeFromMemoryAndWritesAreVisibleAtOnce) {
  Fixture f;
  f.server.create("RayJob", object("before"));
  f.cache.start(std::chrono::seconds(5));
  ASSERT_TRUE(f.cache.get("RayJob", "ns", "before"));
  EXPECT_FALSE(f.cache.get("RayJob", "ns", "absent"));
  json created = *f.cache.create("RayJob", object("mine"));
  created["spec"]["x"] = 2;
  f.cache.update("RayJob", created);
  EXPECT_EQ((*f.cache.get("RayJob", "ns", "mine"))["spec"]["x"], 2);
  f.server.create("Pod", object("p1", {{"ray.io/cluster", "c"}}));
  f.server.create("Pod", object("p2", {{"ray.io/cluster", "d"}}));
  EXPECT_EQ(f.cache.list("Pod", "ns", {{"ray.io/cluster", "c"}}).size(), 1u);
  EXPECT_EQ(f.apiGets(), 0u) << "no read reached the API server";
  EXPECT_TRUE(f.cache.getLive("RayJob", "ns", "mine"));
  EXPECT_EQ(f.apiGets(), 1u) << "a live read does";
}

// The cache hands out the objects the server's watch delivered, shared and never copied: what
// the reconciler reads is the very snapshot the server wrote, and a write's answer for a version
// the watch already delivered keeps that snapshot.
TEST(InformerCacheTest, ReadsShareTheWatchedSnapshotWithoutCopies) {
  Fixture f;
  f.cache.start(std::chrono::seconds(5));
  Snapshot written = f.cache.create("RayJob", object("a"));
  Snapshot onServer = f.server.getSnapshot("RayJob", "ns", "a");
  EXPECT_EQ(written.get(), onServer.get()) << "the write's answer is the server's snapshot";
  EXPECT_EQ(f.cache.getSnapshot("RayJob", "ns", "a").get(), onServer.get());
  json next = *written;
  next["spec"]["x"] = 5;
  f.server.update("RayJob", next);  // another writer: the watch delivers the new version
  Snapshot fresh = f.cache.getSnapshot("RayJob", "ns", "a");
  EXPECT_EQ(fresh.get(), f.server.getSnapshot("RayJob", "ns", "a").get());
  EXPECT_EQ((*written)["spec"]["x"], 1) << "a snapshot handed out earlier never changes";
  EXPECT_EQ((*fresh)["spec"]["x"], 5);
  EXPECT_FALSE(f.cache.getSnapshot("RayJob", "ns", "absent"));
}

// A client whose watch events the test delivers by hand (reordering, staleness).
// A transform that keeps all but the spec.
Snapshot dropSpec(const Snapshot& o) {
  json slim = *o;
  slim.erase("spec");
  return std::make_shared<const json>(std::move(slim));
}

class HandDeliveredWatch : public KubeClient {
 public:
  explicit HandDeliveredWatch(KubeClient& inner) : inner_(inner) {}
  std::optional<json> get(const std::string& k, const std::string& n,
                          const std::string& m) override {
    return inner_.get(k, n, m);
  }
  std::vector<json> list(const std::string& k, const std::string& n,
                         const std::map<std::string, std::string>& l) override {
    return inner_.list(k, n, l);
  }
  Snapshot create(const std::string& k, json o) override { return inner_.create(k, std::move(o)); }
  Snapshot update(const std::string& k, json o) override { return inner_.update(k, std::move(o)); }
  Snapshot updateStatus(const std::string& k, json o) override {
    return inner_.updateStatus(k, std::move(o));
  }
  void remove(const std::string& k, const std::string& n, const std::string& m,
              Propagation p) override {
    inner_.remove(k, n, m, p);
  }
  void watch(const std::string&, WatchCallback callback) override { deliver = callback; }
  WatchCallback deliver;

 private:
  KubeClient& inner_;
};

// An inner client that hands its own encoding with each event (as the simulated API server
// does), delivered by the test.
class HandDeliveredPacks : public HandDeliveredWatch {
 public:
  using HandDeliveredWatch::HandDeliveredWatch;
  void watchPacked(const std::string& kind, PackedCallback callback) override {
    deliverPacked[kind] = callback;
  }
  std::map<std::string, PackedCallback> deliverPacked;  // by kind
  // The answers of createEncoded: the head, and an encoding the test marks.
  Encoded createEncoded(const std::string& kind, json object) override {
    json whole = *create(kind, std::move(object));
    json head = whole;
    head.erase("spec");
    whole["spec"]["marked"] = true;
    return {std::make_shared<const json>(std::move(head)), encodingOf(whole)};
  }
  static Packed encodingOf(const json& o) {
    return std::make_shared<const std::vector<uint8_t>>(json::to_cbor(o));
  }
};

Packed encodingOf(const json& o) {
  return std::make_shared<const std::vector<uint8_t>>(json::to_cbor(o));
}

// A packed kind keeps the bytes the inner client handed over instead of encoding the object
// again (one encoding, shared with the server); a kind with a transform asks for whole objects
// (the snapshot beside an encoding may be only the head) and encodes what it keeps.
TEST(InformerCacheTest, APackedKindKeepsTheInnerClientsEncoding) {
  ManualClock clock;
  sim::SimKube server(clock);
  HandDeliveredPacks hand(server);
  InformerCache cache(hand, {"RayJob", "Pod"},
                      {{"RayJob", {nullptr, true}}, {"Pod", {dropSpec, true}}});
  cache.start(std::chrono::seconds(5));
  ASSERT_EQ(hand.deliverPacked.size(), 1u) << "only the kind kept whole takes encodings";
  ASSERT_TRUE(hand.deliverPacked.count("RayJob"));
  ASSERT_TRUE(hand.deliver) << "the transformed kind watches whole objects";
  json job = object("a");
  job["metadata"]["resourceVersion"] = "5";
  json marked = job;
  marked["spec"]["x"] = 7;  // differs from the snapshot: shows which one the cache kept
  hand.deliverPacked["RayJob"](WatchEventType::Added, std::make_shared<const json>(job),
                               encodingOf(marked));
  EXPECT_EQ((*cache.get("RayJob", "ns", "a"))["spec"]["x"], 7);
  hand.deliverPacked["RayJob"](WatchEventType::Added, std::make_shared<const json>(job), nullptr);
  EXPECT_EQ((*cache.get("RayJob", "ns", "a"))["spec"]["x"], 7) << "the same version is kept";
  hand.deliver(WatchEventType::Added, object("p"));
  auto found = cache.get("Pod", "ns", "p");
  ASSERT_TRUE(found);
  json pod = *found;
  EXPECT_FALSE(pod.contains("spec")) << pod.dump();
  EXPECT_EQ(pod["metadata"]["name"], "p");
}

// An inner client whose status writes answer as the REST client's do: the head of the server's
// object and its encoding, which the test marks.
class HeadAnsweringStatusWrites : public HandDeliveredPacks {
 public:
  using HandDeliveredPacks::HandDeliveredPacks;
  Encoded updateEncoded(const std::string& kind, json object) override {
    json whole = *update(kind, std::move(object));
    json marked = whole;
    marked["spec"]["marked"] = true;
    return {std::make_shared<const json>(std::move(whole)), encodingOf(marked)};
  }
  Encoded updateStatusEncoded(const std::string& kind, const json& object) override {
    json whole = *updateStatus(kind, object);
    json head = whole;
    head.erase("spec");
    whole["spec"]["marked"] = true;
    return {std::make_shared<const json>(std::move(head)), encodingOf(whole)};
  }
};

// A status write of a kind kept encoded: the cache keeps the answer's bytes (no document of its
// spec built) and the writer gets back what it wrote with the server's resourceVersion and
// status, so that a second write of the same decision is checked against the right version.
TEST(InformerCacheTest, AStatusWriteKeepsTheAnswersEncodingAndReturnsTheWrittenObject) {
  ManualClock clock;
  sim::SimKube server(clock);
  HeadAnsweringStatusWrites hand(server);
  InformerCache cache(hand, {"RayJob"}, {{"RayJob", {nullptr, true}}});
  cache.start(std::chrono::seconds(5));
  json job = object("a");
  job["spec"]["entrypoint"] = "python x.py";
  json written = *cache.create("RayJob", job);
  written["status"] = {{"jobDeploymentStatus", "Running"}};
  Snapshot answer = cache.updateStatus("RayJob", written);
  ASSERT_TRUE(answer);
  EXPECT_EQ((*answer)["spec"]["entrypoint"], "python x.py") << "the spec written with it";
  EXPECT_FALSE((*answer)["spec"].contains("marked")) << "not decoded from the encoding";
  EXPECT_EQ((*answer)["status"]["jobDeploymentStatus"], "Running");
  EXPECT_NE((*answer)["metadata"]["resourceVersion"], written["metadata"]["resourceVersion"])
      << "the server's new version";
  EXPECT_EQ((*answer)["metadata"]["resourceVersion"],
            (*server.get("RayJob", "ns", "a"))["metadata"]["resourceVersion"]);
  auto cached = cache.get("RayJob", "ns", "a");
  ASSERT_TRUE(cached);
  EXPECT_EQ((*cached)["spec"]["marked"], true) << "the cache keeps the bytes it was handed";
  EXPECT_EQ((*cached)["status"]["jobDeploymentStatus"], "Running");
  json again = *answer;
  again["status"]["jobDeploymentStatus"] = "Complete";
  EXPECT_NO_THROW(cache.updateStatus("RayJob", again)) << "checked against the new version";
}

// An update of a kind kept encoded: the cache keeps the inner client's bytes, the writer gets
// the whole answer.
TEST(InformerCacheTest, AnUpdateKeepsTheAnswersEncoding) {
  ManualClock clock;
  sim::SimKube server(clock);
  HeadAnsweringStatusWrites hand(server);
  InformerCache cache(hand, {"RayJob"}, {{"RayJob", {nullptr, true}}});
  cache.start(std::chrono::seconds(5));
  json job = *cache.create("RayJob", object("a"));
  job["metadata"]["finalizers"] = {"ray.io/rayjob-finalizer"};
  Snapshot answer = cache.update("RayJob", job);
  ASSERT_TRUE(answer);
  EXPECT_EQ((*answer)["metadata"]["finalizers"].size(), 1u);
  EXPECT_FALSE((*answer)["spec"].contains("marked"));
  auto cached = cache.get("RayJob", "ns", "a");
  ASSERT_TRUE(cached);
  EXPECT_EQ((*cached)["spec"]["marked"], true) << "the cache keeps the bytes it was handed";
  EXPECT_EQ((*cached)["metadata"]["finalizers"].size(), 1u);
}

// The REST client hands a packed kind's events over as the object's head and its encoding:
// listeners hear the head, readers get the whole object.
TEST(InformerCacheTest, ListenersHearTheHeadAndReadersGetTheWholeObject) {
  ManualClock clock;
  sim::SimKube server(clock);
  HandDeliveredPacks hand(server);
  InformerCache cache(hand, {"RayJob"}, {{"RayJob", {nullptr, true}}});
  std::vector<json> heard;
  cache.watch("RayJob", [&](WatchEventType, const json& o) { heard.push_back(o); });
  cache.start(std::chrono::seconds(5));
  json whole = object("a");
  whole["metadata"]["resourceVersion"] = "5";
  whole["spec"]["entrypoint"] = "python x.py";
  json head = whole;
  head.erase("spec");
  hand.deliverPacked["RayJob"](WatchEventType::Added, std::make_shared<const json>(head),
                               encodingOf(whole));
  ASSERT_EQ(heard.size(), 1u);
  EXPECT_EQ(heard[0], head);
  EXPECT_EQ(*cache.get("RayJob", "ns", "a"), whole);
  EXPECT_EQ(cache.list("RayJob", "ns"), std::vector<json>{whole});
}

// post() of a packed kind kept whole takes the answer encoded (the executor's creates); a kind
// with a transform still reads it whole.
TEST(InformerCacheTest, APostedObjectIsKeptFromItsEncodedAnswer) {
  ManualClock clock;
  sim::SimKube server(clock);
  HandDeliveredPacks hand(server);
  InformerCache cache(hand, {"RayJob", "Pod"},
                      {{"RayJob", {nullptr, true}}, {"Pod", {dropSpec, true}}});
  cache.start(std::chrono::seconds(5));
  cache.post("RayJob", object("a"));
  auto job = cache.get("RayJob", "ns", "a");
  ASSERT_TRUE(job);
  EXPECT_EQ((*job)["spec"]["marked"], true) << "the encoding was not the one kept";
  EXPECT_EQ((*job)["spec"]["x"], 1);
  cache.post("Pod", object("p"));
  auto pod = cache.get("Pod", "ns", "p");
  ASSERT_TRUE(pod);
  EXPECT_FALSE(pod->contains("spec")) << "the transform did not see the whole answer";
}

TEST(InformerCacheTest, AnOlderVersionNeverReplacesANewerOne) {
  ManualClock clock;
  sim::SimKube server(clock);
  HandDeliveredWatch hand(server);
  InformerCache cache(hand, {"RayJob"});
  cache.start(std::chrono::seconds(5));
  json v1 = *cache.create("RayJob", object("a"));
  json v2 = v1;
  v2["spec"]["x"] = 2;
  v2 = *cache.update("RayJob", v2);
  hand.deliver(WatchEventType::Modified, v1);  // a late event for the older version
  EXPECT_EQ((*cache.get("RayJob", "ns", "a"))["spec"]["x"], 2);
  json v3 = v2;
  v3["metadata"]["resourceVersion"] =
      std::to_string(std::stoull(v2["metadata"]["resourceVersion"].get<std::string>()) + 1);
  v3["spec"]["x"] = 3;
  hand.deliver(WatchEventType::Modified, v3);  // a newer one from another writer
  EXPECT_EQ((*cache.get("RayJob", "ns", "a"))["spec"]["x"], 3);
}

TEST(InformerCacheTest, ListenersSeeCachedObjectsThenChanges) {
  Fixture f;
  f.server.create("RayJob", object("old"));
  f.cache.start(std::chrono::seconds(5));
  std::vector<std::string> seen;
  f.cache.watch("RayJob", [&](WatchEventType type, const json& o) {
    seen.push_back(std::string(type == WatchEventType::Added      ? "added "
                               : type == WatchEventType::Modified ? "modified "
                                                                  : "deleted ") +
                   o["metadata"]["name"].get<std::string>());
  });
  f.server.create("RayJob", object("new"));
  f.server.remove("RayJob", "ns", "old");
  EXPECT_EQ(seen, (std::vector<std::string>{"added old", "added new", "deleted old"}));
  EXPECT_FALSE(f.cache.get("RayJob", "ns", "old"));
}

// Found with the embedded operator: removing a deleted RayJob's last finalizer deletes it on the
// server, whose Deleted event can arrive before the update's answer; that answer must not bring
// the RayJob back into the cache (it was reconciled forever as if it still existed).
TEST(InformerCacheTest, AWriteAnswerAfterItsOwnDeleteDoesNotResurrectTheObject) {
  Fixture f;
  f.cache.start(std::chrono::seconds(5));
  json job = object("going");
  job["metadata"]["finalizers"] = json::array({"ray.io/rayjob-finalizer"});
  json created = *f.cache.create("RayJob", job);
  f.cache.remove("RayJob", "ns", "going");
  json current = *f.cache.get("RayJob", "ns", "going");
  current["metadata"]["finalizers"] = json::array();
  f.cache.update("RayJob", current);  // the server deletes it now
  EXPECT_FALSE(f.cache.get("RayJob", "ns", "going"));
  // A new object under the same name is cached again.
  f.cache.create("RayJob", object("going"));
  EXPECT_TRUE(f.cache.get("RayJob", "ns", "going"));
}

TEST(InformerCacheTest, ListOwnedAnswersFromTheOwnerIndex) {
  Fixture f;
  f.cache.start(std::chrono::seconds(5));
  json pod = object("p");
  pod["metadata"]["ownerReferences"] = json::array({{{"kind", "RayCluster"}, {"uid", "u1"}}});
  f.server.create("Pod", pod);
  f.server.create("Pod", object("q"));
  uint64_t before = f.apiGets();
  auto owned = f.cache.listOwned("Pod", "ns", "u1");
  ASSERT_EQ(owned.size(), 1u);
  EXPECT_EQ((*owned[0])["metadata"]["name"], "p");
  EXPECT_EQ(f.apiGets(), before) << "no API call";
  f.server.remove("Pod", "ns", "p");
  EXPECT_TRUE(f.cache.listOwned("Pod", "ns", "u1").empty());
}

// A packed kind (held as CBOR, decoded per read) answers every read as the unpacked cache
// would: the transformed object, newest version, by name, by labels, by owner, to listeners.
TEST(InformerCacheTest, APackedKindReadsAsTheObjectsItKeeps) {
  ManualClock clock;
  sim::SimKube server(clock);
  HandDeliveredWatch hand(server);
  InformerCache cache(hand, {"Pod"}, {{"Pod", {dropSpec, true}}});
  cache.start(std::chrono::seconds(5));
  json pod = object("p", {{"ray.io/cluster", "c"}});
  pod["metadata"]["ownerReferences"] = json::array({{{"kind", "RayCluster"}, {"uid", "u1"}}});
  json v1 = *cache.create("Pod", pod);
  json v2 = v1;
  v2["status"] = {{"phase", "Running"}};
  v2 = *cache.updateStatus("Pod", v2);
  hand.deliver(WatchEventType::Modified, v1);  // late: must not replace v2
  json expected = *dropSpec(std::make_shared<const json>(v2));
  EXPECT_EQ(*cache.get("Pod", "ns", "p"), expected);
  EXPECT_EQ(cache.list("Pod", "ns", {{"ray.io/cluster", "c"}}), std::vector<json>{expected});
  EXPECT_TRUE(cache.list("Pod", "ns", {{"ray.io/cluster", "d"}}).empty());
  ASSERT_EQ(cache.listOwned("Pod", "ns", "u1").size(), 1u);
  EXPECT_EQ(*cache.listOwned("Pod", "ns", "u1")[0], expected);
  std::vector<json> visited;
  cache.forEachOwned("Pod", "ns", "u1", [&](const json& o) { visited.push_back(o); });
  EXPECT_EQ(visited, std::vector<json>{expected});
  std::vector<json> heard;
  cache.watch("Pod", [&](WatchEventType, const json& o) { heard.push_back(o); });
  EXPECT_EQ(heard, std::vector<json>{expected});
  hand.deliver(WatchEventType::Deleted, v2);
  EXPECT_FALSE(cache.get("Pod", "ns", "p"));
  EXPECT_TRUE(cache.listOwned("Pod", "ns", "u1").empty());
  EXPECT_EQ(cache.size("Pod"), 0u);
}

}  // namespace
}  // namespace rayjournal::kube
