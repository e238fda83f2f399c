#include "adapters/kube/InformerCache.h"

#include <thread>

namespace rayjournal::kube {
namespace {

std::string keyOf(const json& o) {
  return o["metadata"].value("namespace", "") + "/" + o["metadata"].value("name", "");
}

const std::string& resourceVersionOf(const json& o) {
  static const std::string none;
  auto meta = o.find("metadata");
  if (meta == o.end()) return none;
  auto rv = meta->find("resourceVersion");
  return rv != meta->end() && rv->is_string() ? rv->get_ref<const std::string&>() : none;
}

// resourceVersions are opaque, but etcd's are increasing integers: compare when both are. The
// same version is the same object (a write's answer and its own watch event): not replaced.
bool newerVersion(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return true;
  if (a == b) return false;
  if (a.find_first_not_of("0123456789") != std::string::npos ||
      b.find_first_not_of("0123456789") != std::string::npos)
    return true;
  return a.size() != b.size() ? a.size() > b.size() : a > b;
}

bool labelsMatch(const json& o, const std::map<std::string, std::string>& labels) {
  if (labels.empty()) return true;
  auto meta = o.find("metadata");
  if (meta == o.end()) return false;
  auto have = meta->find("labels");
  if (have == meta->end()) return false;
  for (const auto& [k, v] : labels) {
    auto it = have->find(k);
    if (it == have->end() || !it->is_string() || it->get_ref<const std::string&>() != v)
      return false;
  }
  return true;
}

}  // namespace

InformerCache::InformerCache(KubeClient& inner, std::set<std::string> kinds,
                             std::map<std::string, KindOptions> options)
    : inner_(inner) {
  for (const auto& kind : kinds) {
    auto it = options.find(kind);
    stores_[kind].options = it == options.end() ? KindOptions() : it->second;
  }
}

InformerCache::Entry InformerCache::Store::keep(const Snapshot& object,
                                                const Packed& encoded) const {
  Entry entry{nullptr, nullptr, resourceVersionOf(*object), ownerUidsOf(*object)};
  if (!options.packed) {
    entry.object = object;
    return entry;
  }
  entry.packed = encoded ? encoded : pack(*object);
  return entry;
}

Snapshot InformerCache::Store::read(const Entry& entry) const {
  if (!options.packed) return entry.object;
  return std::make_shared<const json>(json::from_cbor(*entry.packed));
}

void InformerCache::start(std::chrono::milliseconds timeout) {
  for (auto& [kind, store] : stores_) {
    std::string k = kind;
    // Only a packed kind kept whole takes the inner client's encoding, and with it events
    // whose snapshot may be the object's head alone (watchPacked): a transform needs the
    // whole object, and so does an unpacked kind's store.
    if (store.options.packed && !store.options.transform)
      inner_.watchPacked(k, [this, k](WatchEventType type, const Snapshot& o, const Packed& p) {
        onEvent(k, type, o, p);
      });
    else
      inner_.watchSnapshots(k, [this, k](WatchEventType type, const Snapshot& o) {
        onEvent(k, type, o, nullptr);
      });
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!inner_.watchesSynced()) {
    if (std::chrono::steady_clock::now() > deadline)
      throw ApiError(0, "CacheSyncTimeout",
                     "the watches did not deliver their first list within " +
                         std::to_string(timeout.count()) + " ms");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::unique_lock lock(mu_);
  for (auto& [kind, store] : stores_) store.synced = true;
}

void InformerCache::indexOwners(Store& store, const std::string& key,
                                const std::vector<std::string>& ownerUids, bool add) {
  for (const auto& owner : ownerUids) {
    if (add) {
      store.owned[owner].insert(key);
    } else if (auto it = store.owned.find(owner); it != store.owned.end()) {
      it->second.erase(key);
      if (it->second.empty()) store.owned.erase(it);
    }
  }
}

void InformerCache::bury(Store& store, const std::string& key, const json& last) {
  constexpr size_t kMaxTombstones = 4096;
  if (store.tombstones.insert_or_assign(key, resourceVersionOf(last)).second)
    store.tombstoneOrder.push_back(key);
  while (store.tombstoneOrder.size() > kMaxTombstones) {
    store.tombstones.erase(store.tombstoneOrder.front());
    store.tombstoneOrder.pop_front();
  }
}

void InformerCache::keepNewer(Store& store, const Snapshot& object, const Packed& encoded) {
  const std::string key = keyOf(*object);
  if (auto dead = store.tombstones.find(key); dead != store.tombstones.end()) {
    // The answer of a write before the delete.
    if (!newerVersion(resourceVersionOf(*object), dead->second)) return;
    store.tombstones.erase(dead);
  }
  auto slot = store.objects.find(key);
  if (slot != store.objects.end()) {
    if (!newerVersion(resourceVersionOf(*object), slot->second.resourceVersion)) return;
    indexOwners(store, key, slot->second.ownerUids, false);
  }
  Entry entry = store.keep(object, encoded);
  indexOwners(store, key, entry.ownerUids, true);
  store.objects.insert_or_assign(key, std::move(entry));
}

void InformerCache::onEvent(const std::string& kind, WatchEventType type, const Snapshot& whole,
                            const Packed& encoded) {
  const Transform& transform = stores_.at(kind).options.transform;  // fixed after construction
  Snapshot object = transform && whole ? transform(whole) : whole;
  {
    std::unique_lock lock(mu_);
    Store& store = stores_.at(kind);
    if (type == WatchEventType::Deleted) {
      auto it = store.objects.find(keyOf(*object));
      if (it != store.objects.end()) {
        // Vanished while no watch was open: the handlers get the last state this cache saw.
        if (isFinalStateUnknown(*object)) object = store.read(it->second);
        indexOwners(store, it->first, it->second.ownerUids, false);
        store.objects.erase(it);
      }
      bury(store, keyOf(*object), *object);
    } else
      keepNewer(store, object, encoded);  // null but for a packed kind kept whole (start())
  }
  std::vector<WatchCallback> listeners;
  {
    std::shared_lock lock(mu_);
    listeners = stores_.at(kind).listeners;
  }
  std::lock_guard dispatch(dispatchMu_);
  for (auto& l : listeners) l(type, *object);
}

void InformerCache::remember(const std::string& kind, const Snapshot& whole) {
  if (!cached(kind) || !whole || !whole->is_object()) return;
  const Transform& transform = stores_.at(kind).options.transform;
  const Snapshot object = transform ? transform(whole) : whole;
  std::unique_lock lock(mu_);
  keepNewer(stores_.at(kind), object, nullptr);
}

std::optional<Snapshot> InformerCache::lookup(const std::string& kind, const std::string& ns,
                                              const std::string& name) const {
  if (!cached(kind)) return std::nullopt;
  std::shared_lock lock(mu_);
  const Store& store = stores_.at(kind);
  if (!store.synced) return std::nullopt;
  auto it = store.objects.find(ns + "/" + name);
  return it == store.objects.end() ? nullptr : store.read(it->second);
}

std::optional<json> InformerCache::get(const std::string& kind, const std::string& ns,
                                       const std::string& name) {
  auto found = lookup(kind, ns, name);
  if (!found) return inner_.get(kind, ns, name);
  if (!*found) return std::nullopt;
  return **found;
}

Snapshot InformerCache::getSnapshot(const std::string& kind, const std::string& ns,
                                    const std::string& name) {
  auto found = lookup(kind, ns, name);
  return found ? *found : inner_.getSnapshot(kind, ns, name);
}

std::optional<json> InformerCache::getLive(const std::string& kind, const std::string& ns,
                                           const std::string& name) {
  auto found = inner_.getLive(kind, ns, name);
  if (found) remember(kind, snapshotOf(*found));
  return found;
}

std::vector<json> InformerCache::list(const std::string& kind, const std::string& ns,
                                      const std::map<std::string, std::string>& labels) {
  if (cached(kind)) {
    std::shared_lock lock(mu_);
    const Store& store = stores_.at(kind);
    if (store.synced) {
      std::vector<json> out;
      const std::string prefix = ns + "/";
      for (const auto& [key, entry] : store.objects) {
        if (!ns.empty() && key.compare(0, prefix.size(), prefix) != 0) continue;
        if (store.options.packed) {
          json o = json::from_cbor(*entry.packed);
          if (labelsMatch(o, labels)) out.push_back(std::move(o));
        } else if (labelsMatch(*entry.object, labels)) {
          out.push_back(*entry.object);
        }
      }
      return out;
    }
  }
  return inner_.list(kind, ns, labels);
}

Snapshot InformerCache::create(const std::string& kind, json object) {
  Snapshot created = inner_.create(kind, std::move(object));
  remember(kind, created);
  return created;
}

bool InformerCache::keptEncoded(const std::string& kind) const {
  if (!cached(kind)) return false;
  const KindOptions& options = stores_.at(kind).options;  // fixed after construction
  return options.packed && !options.transform;
}

void InformerCache::post(const std::string& kind, json object) {
  if (!cached(kind)) return inner_.post(kind, std::move(object));
  if (!keptEncoded(kind)) {
    create(kind, std::move(object));
    return;
  }
  Encoded answer = inner_.createEncoded(kind, std::move(object));
  if (!answer.object || !answer.object->is_object()) return;
  std::unique_lock lock(mu_);
  keepNewer(stores_.at(kind), answer.object, answer.packed);
}

std::vector<std::optional<ApiError>> InformerCache::postAll(const std::string& kind,
                                                            std::vector<json> objects) {
  if (cached(kind)) return KubeClient::postAll(kind, std::move(objects));
  return inner_.postAll(kind, std::move(objects));
}

Snapshot InformerCache::update(const std::string& kind, json object) {
  if (!keptEncoded(kind)) {
    Snapshot updated = inner_.update(kind, std::move(object));
    remember(kind, updated);
    return updated;
  }
  Encoded answer = inner_.updateEncoded(kind, std::move(object));
  if (!answer.packed) {
    remember(kind, answer.object);
  } else if (answer.object && answer.object->is_object()) {
    std::unique_lock lock(mu_);
    keepNewer(stores_.at(kind), answer.object, answer.packed);
  }
  return answer.object;
}

Snapshot InformerCache::updateStatus(const std::string& kind, json object) {
  if (!keptEncoded(kind)) {
    Snapshot updated = inner_.updateStatus(kind, std::move(object));
    remember(kind, updated);
    return updated;
  }
  Encoded answer = inner_.updateStatusEncoded(kind, object);
  if (!answer.packed) {
    remember(kind, answer.object);
    return answer.object;
  }
  {
    std::unique_lock lock(mu_);
    keepNewer(stores_.at(kind), answer.object, answer.packed);
  }
  if (answer.object->contains("spec")) return answer.object;
  // The head of a status write's answer: the object is the spec written with it and the rest
  // as the server answered (resourceVersion, status), so no document of the spec is built.
  for (const auto& [key, value] : answer.object->items()) object[key] = value;
  return std::make_shared<const json>(std::move(object));
}

void InformerCache::remove(const std::string& kind, const std::string& ns, const std::string& name,
                           Propagation propagation) {
  inner_.remove(kind, ns, name, propagation);
}

void InformerCache::watch(const std::string& kind, WatchCallback callback) {
  if (!cached(kind)) return inner_.watch(kind, std::move(callback));
  std::vector<Snapshot> existing;
  {
    std::unique_lock lock(mu_);
    Store& store = stores_.at(kind);
    for (const auto& [key, entry] : store.objects) existing.push_back(store.read(entry));
    store.listeners.push_back(callback);
  }
  std::lock_guard dispatch(dispatchMu_);
  for (const auto& o : existing) callback(WatchEventType::Added, *o);
}

bool InformerCache::walkOwned(const std::string& kind, const std::string& ns,
                              const std::string& ownerUid,
                              const std::function<void(const Store&, const Entry&)>& visit) const {
  if (!cached(kind)) return false;
  std::shared_lock lock(mu_);
  const Store& store = stores_.at(kind);
  if (!store.synced) return false;
  auto it = store.owned.find(ownerUid);
  if (it == store.owned.end()) return true;
  const std::string prefix = ns + "/";
  for (const auto& key : it->second) {
    if (!ns.empty() && key.compare(0, prefix.size(), prefix) != 0) continue;
    auto o = store.objects.find(key);
    if (o != store.objects.end()) visit(store, o->second);
  }
  return true;
}

std::vector<Snapshot> InformerCache::listOwned(const std::string& kind, const std::string& ns,
                                               const std::string& ownerUid) {
  std::vector<Snapshot> out;
  if (walkOwned(kind, ns, ownerUid,
                [&](const Store& store, const Entry& e) { out.push_back(store.read(e)); }))
    return out;
  return inner_.listOwned(kind, ns, ownerUid);
}

void InformerCache::forEachOwned(const std::string& kind, const std::string& ns,
                                 const std::string& ownerUid,
                                 const std::function<void(const json&)>& visit) {
  // A packed object is decoded for the visit only, never shared as a snapshot.
  auto each = [&](const Store&, const Entry& e) {
    e.object ? visit(*e.object) : visit(json::from_cbor(*e.packed));
  };
  if (!walkOwned(kind, ns, ownerUid, each)) KubeClient::forEachOwned(kind, ns, ownerUid, visit);
}

size_t InformerCache::size(const std::string& kind) const {
  std::shared_lock lock(mu_);
  auto it = stores_.find(kind);
  return it == stores_.end() ? 0 : it->second.objects.size();
}

}  // namespace rayjournal::kube
