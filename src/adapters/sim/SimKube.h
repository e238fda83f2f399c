// An in-process Kubernetes API server: namespaced JSON objects of any kind with resourceVersion,
// generation, AlreadyExists / Conflict / NotFound, the status subresource, finalizers and
// deletionTimestamp, ownerReference cascading deletion, and watches. Optionally persisted to an
// append-only file in a directory (it plays etcd for the embedded operator). Objects are kept
// serialized (StoredObject), as etcd keeps them: a read decodes, unless the snapshot last written
// is still held by someone, which it then shares. (Keeping recent snapshots alive on purpose, a
// ring of 1,024 or 8,192, was measured slower: 3.3-3.6 against 2.5 ms of CPU per RayJob.)
// Thread-safe; watch callbacks run on the mutating caller's thread after the lock is released.
#pragma once

#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "adapters/Clock.h"
#include "adapters/kube/KubeClient.h"
#include "adapters/sim/StoredObject.h"

namespace rayjournal::sim {

using kube::json;

// One injected fault: the next `count` calls of verb on kind fail with code/reason; with
// afterApply the server applies the write first and the response is lost.
struct FaultRule {
  std::string verb;  // get list create update updateStatus remove, or "*"
  std::string kind;  // or "*"
  int count = 1;
  int code = 500;
  std::string reason = "InternalError";
  bool afterApply = false;
};

class SimKube : public kube::KubeClient {
 public:
  // dir empty: memory only. Otherwise loads <dir>/objects.jsonl and appends every change to it;
  // with readOnly it only loads (tools inspecting a running operator's cluster).
  SimKube(const Clock& clock, std::string dir = "", bool readOnly = false);
  ~SimKube() override;
  // The file an embedded cluster keeps in dir (its presence says an operator ran there).
  static std::string storeFile(const std::string& dir) { return dir + "/objects.jsonl"; }

  std::optional<json> get(const std::string& kind, const std::string& ns,
                          const std::string& name) override;
  std::vector<json> list(const std::string& kind, const std::string& ns,
                         const std::map<std::string, std::string>& labels = {}) override;
  kube::Snapshot create(const std::string& kind, json object) override;
  // The answers of create and of a status write with the bytes the server stored: a cache in
  // front keeps them instead of encoding the object again.
  Encoded createEncoded(const std::string& kind, json object) override;
  Encoded updateStatusEncoded(const std::string& kind, const json& object) override;
  Encoded updateEncoded(const std::string& kind, json object) override;
  kube::Snapshot update(const std::string& kind, json object) override;
  // update() by a named field manager (the simulated Ray autoscaler); update() is the operator's.
  kube::Snapshot updateAs(const std::string& manager, const std::string& kind, json object);
  Encoded updateEncodedAs(const std::string& manager, const std::string& kind, json object);
  // The manager of the last update that changed the spec (not kept across a restart of the
  // embedded cluster: "" then, as for an object only ever created).
  std::string specManager(const std::string& kind, const std::string& ns,
                          const std::string& name) override;
  static constexpr const char* kOperatorManager = "rayjournal";
  kube::Snapshot updateStatus(const std::string& kind, json object) override;
  void remove(const std::string& kind, const std::string& ns, const std::string& name,
              kube::Propagation propagation = kube::Propagation::Background) override;
  kube::Snapshot getSnapshot(const std::string& kind, const std::string& ns,
                             const std::string& name) override;
  void watch(const std::string& kind, kube::WatchCallback callback) override;
  void watchSnapshots(const std::string& kind, kube::SnapshotCallback callback) override;
  // Hands over the stored bytes with each event (a cache keeps them instead of encoding again).
  void watchPacked(const std::string& kind, kube::PackedCallback callback) override;

  // Like list, but the filter runs under the lock and only matches are copied (the simulated
  // world's actors use it to skip objects with nothing to do).
  // Objects of kind whose ownerReferences name ownerUid (the garbage collector's index): what a
  // real controller's informer gives by owner, without scanning every object of the kind.
  std::vector<kube::Snapshot> listOwned(const std::string& kind, const std::string& ns,
                                        const std::string& ownerUid) override;
  std::vector<json> listWhere(const std::string& kind,
                              const std::function<bool(const json&)>& filter);

  void injectFault(FaultRule rule);
  void clearFaults();
  // Every successful create since this SimKube started: {kind, namespace, name, uid, owners}.
  std::vector<json> createHistory() const;
  // Counts of calls by "verb kind" (for benchmarks and tests).
  std::map<std::string, uint64_t> callCounts() const;
  // The stored objects' serialized bytes, summed (for benchmarks).
  size_t storedBytes() const;
  // The same by kind: {kind: {objects, bytes}} (what a benchmark's simulated cluster holds).
  std::map<std::string, std::pair<size_t, size_t>> storedByKind() const;

 private:
  struct Event {
    std::string kind;
    kube::WatchEventType type;
    kube::Snapshot object;
    kube::Packed packed;  // the stored bytes of this version (null for Deleted)
  };
  static std::string keyOf(const std::string& kind, const std::string& ns, const std::string& name);
  void maybeFail(const std::string& verb, const std::string& kind, bool afterApply);
  std::optional<kube::ApiError> lostResponse(const std::string& verb, const std::string& kind);
  void count(const std::string& verb, const std::string& kind);
  // Stores a new version: the snapshot and the bytes kept.
  Encoded put(const std::string& kind, json object, kube::WatchEventType type,
              std::vector<Event>& events);
  void erase(const std::string& key, std::vector<Event>& events);
  void cascade(const std::string& uid, std::vector<Event>& events);
  void index(const std::string& key, const StoredObject& object, bool add);
  void markDeleting(const StoredObject& object, std::vector<Event>& events);

  void orphanDependents(const std::string& uid);
  static void validate(const std::string& kind, const json& object);
  template <typename Apply>
  auto write(const std::string& verb, const std::string& kind, Apply&& apply);
  void finishIfUnblocked(const std::string& key, std::vector<Event>& events);
  void dispatch(const std::vector<Event>& events);
  void persist(const std::string& op, const std::string& key, const std::string& kind,
               const json* object);
  void load(bool readOnly);
  void repairHistory();
  const StoredObject& checkedExisting(const std::string& kind, const json& object);

  const Clock& clock_;
  std::string dir_;
  FILE* log_ = nullptr;
  FILE* history_ = nullptr;  // creates only, never compacted: lets tests count duplicates
  mutable std::mutex mu_;
  std::map<std::string, StoredObject> objects_;  // key: kind/ns/name
  std::map<std::string, std::string> specManagers_;  // key -> who last changed the spec
  std::map<std::string, std::set<std::string>> dependents_;  // owner uid -> keys of owned objects
  uint64_t resourceVersion_ = 0;
  std::vector<FaultRule> faults_;
  std::map<std::string, uint64_t> calls_;
  // CBOR, decoded by createHistory(): as trees these were a sixth of a benchmark's heap.
  std::vector<std::vector<uint8_t>> creates_;
  std::mutex watchMu_;
  std::map<std::string, std::vector<kube::PackedCallback>> watchers_;
};

}  // namespace rayjournal::sim
