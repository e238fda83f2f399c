// A KubeClient decorator that serves get/list of the cached kinds from memory, kept current by
// one watch per kind on the inner client (list, then watch; label-filtered like KubeRay's
// caches by the inner client's watch selectors). The reconcile loop then reads without API
// calls, as controller-runtime's cached client does.
// Guarantees: start() returns once every cached kind delivered its first complete list; a write
// through this client updates the cache with the server's answer at once (read-your-writes);
// an older resourceVersion from the watch never replaces a newer cached object; watch()
// listeners see Added for every cached object, then every change, in order per kind; for a packed
// kind without a transform, an event's object may be only its head (all of it but its spec;
// KubeClient::watchPacked), while get() and list() return it whole. getLive()
// and uncached kinds go to the inner client. Thread-safe.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>

#include "adapters/kube/KubeClient.h"

namespace rayjournal::kube {

class InformerCache : public KubeClient {
 public:
  // What the cache keeps of an object of one kind (controller-runtime's cache transforms): the
  // fields its readers use, so memory follows the reconcilers' needs and not the objects'
  // size. Listeners and readers see the transformed object; writes return the server's answer.
  using Transform = std::function<Snapshot(const Snapshot&)>;
  struct KindOptions {
    Transform transform;  // empty: kept whole
    // Each kept object held as CBOR and decoded on every read: a fraction of a parsed
    // document's memory, for kinds with very many objects (the Pods of a large RayCluster).
    // A read then costs a decode: such kinds are best read by listOwned or get, not by a
    // label-filtered list (which decodes every object of the namespace).
    bool packed = false;
  };

  InformerCache(KubeClient& inner, std::set<std::string> kinds,
                std::map<std::string, KindOptions> options = {});
  // Starts one watch per cached kind and blocks until the inner client says they delivered
  // their first list; throws ApiError (CacheSyncTimeout) after the timeout.
  void start(std::chrono::milliseconds timeout);

  std::optional<json> get(const std::string& kind, const std::string& ns,
                          const std::string& name) override;
  Snapshot getSnapshot(const std::string& kind, const std::string& ns,
                       const std::string& name) override;
  std::optional<json> getLive(const std::string& kind, const std::string& ns,
                              const std::string& name) override;
  std::vector<json> list(const std::string& kind, const std::string& ns,
                         const std::map<std::string, std::string>& labels = {}) override;
  Snapshot create(const std::string& kind, json object) override;
  // A cached kind's answer is still read (the cache keeps it): a packed kind without a transform
  // takes it encoded (createEncoded), no document of its spec built; others go to the inner
  // post().
  void post(const std::string& kind, json object) override;
  // A cached kind one by one, as post(); others to the inner postAll().
  std::vector<std::optional<ApiError>> postAll(const std::string& kind,
                                               std::vector<json> objects) override;
  // A kind kept encoded (packed, no transform) keeps the inner client's encoding of the answer.
  Snapshot update(const std::string& kind, json object) override;
  // A kind kept encoded (packed, no transform) takes the answer encoded (updateStatusEncoded):
  // then what it returns is the object written with the server's metadata and status.
  Snapshot updateStatus(const std::string& kind, json object) override;
  void remove(const std::string& kind, const std::string& ns, const std::string& name,
              Propagation propagation = Propagation::Background) override;
  void watch(const std::string& kind, WatchCallback callback) override;
  std::string specManager(const std::string& kind, const std::string& ns,
                          const std::string& name) override {
    return inner_.specManager(kind, ns, name);
  }
  // From the cache's owner index when kind is cached and synced: no scan of the kind.
  std::vector<Snapshot> listOwned(const std::string& kind, const std::string& ns,
                                  const std::string& ownerUid) override;
  void forEachOwned(const std::string& kind, const std::string& ns, const std::string& ownerUid,
                    const std::function<void(const json&)>& visit) override;
  size_t size(const std::string& kind) const;

 private:
  // One cached object: the snapshot itself, or for a packed kind its CBOR encoding.
  struct Entry {
    Snapshot object;
    Packed packed;  // shared with the inner client when it handed its own encoding over
    // Its resourceVersion and owner uids: all an event needs to compare and re-index it
    // without decoding a packed object.
    std::string resourceVersion;
    std::vector<std::string> ownerUids;
  };
  struct Store {
    std::map<std::string, Entry> objects;  // "ns/name"
    std::map<std::string, std::set<std::string>> owned;  // owner uid -> "ns/name"
    // Deleted objects' last resourceVersions: a write's answer that arrives after its own
    // Deleted event (the last finalizer removed) must not bring the object back. Bounded,
    // oldest first.
    std::map<std::string, std::string> tombstones;
    std::deque<std::string> tombstoneOrder;
    std::vector<WatchCallback> listeners;
    KindOptions options;
    bool synced = false;
    // `encoded`, when not null, is object's CBOR from the inner client: kept as it is.
    Entry keep(const Snapshot& object, const Packed& encoded) const;
    Snapshot read(const Entry& entry) const;
  };
  static void bury(Store& store, const std::string& key, const json& last);
  static void indexOwners(Store& store, const std::string& key,
                          const std::vector<std::string>& ownerUids, bool add);
  void onEvent(const std::string& kind, WatchEventType type, const Snapshot& object,
               const Packed& encoded);
  void remember(const std::string& kind, const Snapshot& object);
  void keepNewer(Store& store, const Snapshot& object, const Packed& encoded);
  bool cached(const std::string& kind) const { return stores_.count(kind) > 0; }
  // A packed kind without a transform: it keeps the inner client's encoding of an answer.
  bool keptEncoded(const std::string& kind) const;
  // Visits the cached objects of kind owned by ownerUid (in ns, or all when ns is ""), under
  // the read lock; false when the kind is not served from memory (not cached, not synced).
  bool walkOwned(const std::string& kind, const std::string& ns, const std::string& ownerUid,
                 const std::function<void(const Store&, const Entry&)>& visit) const;
  // The cached answer (nullptr: absent), or nullopt when this kind is not served from memory.
  std::optional<Snapshot> lookup(const std::string& kind, const std::string& ns,
                                 const std::string& name) const;

  KubeClient& inner_;
  std::map<std::string, Store> stores_;  // fixed set of kinds; contents under mu_
  mutable std::shared_mutex mu_;
  std::mutex dispatchMu_;  // listeners run one event at a time
};

}  // namespace rayjournal::kube
