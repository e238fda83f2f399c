#include "adapters/sim/SimKube.h"

#include <filesystem>
#include <fstream>
#include <type_traits>

#include "adapters/TimeFormat.h"
#include "model/JsonAccess.h"

namespace rayjournal::sim {
namespace {

std::string nsOf(const json& o) {
  return o["metadata"].value("namespace", "default");
}
// The API server's generateName: the prefix plus 5 characters of apimachinery's alphabet, here
// derived from the next resourceVersion so that a simulated run names objects the same way
// every time.
void assignGeneratedName(json& object, uint64_t nextVersion) {
  if (!object.is_object() || !object["metadata"].is_object()) return;
  json& meta = object["metadata"];
  const json& prefix = meta.contains("generateName") ? meta["generateName"] : json();
  if (!prefix.is_string() || (meta.contains("name") && meta["name"].is_string() &&
                              !meta["name"].get<std::string>().empty()))
    return;
  static const std::string alphabet = "bcdfghjklmnpqrstvwxz2456789";
  uint64_t h = 1469598103934665603ull ^ nextVersion;
  for (unsigned char c : prefix.get<std::string>()) h = (h ^ c) * 1099511628211ull;
  std::string name = prefix.get<std::string>();
  for (int i = 0; i < 5; ++i, h /= alphabet.size()) name.push_back(alphabet[h % alphabet.size()]);
  meta["name"] = name;
}

std::string nameOf(const json& o) {
  return o["metadata"].value("name", "");
}

// Decoded after the store's lock is released.
std::vector<json> values(const std::vector<StoredObject::Handle>& handles) {
  std::vector<json> out;
  out.reserve(handles.size());
  for (const auto& h : handles) out.push_back(*h.snapshot());
  return out;
}

std::vector<kube::Snapshot> snapshots(const std::vector<StoredObject::Handle>& handles) {
  std::vector<kube::Snapshot> out;
  out.reserve(handles.size());
  for (const auto& h : handles) out.push_back(h.snapshot());
  return out;
}

}  // namespace

SimKube::SimKube(const Clock& clock, std::string dir, bool readOnly)
    : clock_(clock), dir_(std::move(dir)) {
  if (dir_.empty()) return;
  if (!readOnly) std::filesystem::create_directories(dir_);
  load(readOnly);
}

SimKube::~SimKube() {
  if (log_) std::fclose(log_);
  if (history_) std::fclose(history_);
}

std::string SimKube::keyOf(const std::string& kind, const std::string& ns,
                           const std::string& name) {
  return kind + "/" + ns + "/" + name;
}

// Replays the change log, then rewrites it compacted so it does not grow without bound.
void SimKube::load(bool readOnly) {
  std::string path = storeFile(dir_);
  {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      json entry = json::parse(line, nullptr, false);
      if (entry.is_discarded())
        break;  // a torn final line from a kill: everything before it stands
      std::string key = entry["key"];
      if (auto old = objects_.find(key); old != objects_.end()) {
        index(key, old->second, false);
        objects_.erase(old);
      }
      if (entry["op"] == "put") {
        StoredObject stored(entry["kind"], entry["object"]);
        index(key, stored, true);
        const std::string& rv = stored.resourceVersion();
        resourceVersion_ = std::max<uint64_t>(resourceVersion_, rv.empty() ? 0 : std::stoull(rv));
        objects_.insert_or_assign(key, std::move(stored));
      }
      resourceVersion_ = std::max<uint64_t>(resourceVersion_, entry.value("rv", uint64_t(0)));
    }
  }
  if (readOnly) return;
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const auto& [key, stored] : objects_) {
      out << json{{"op", "put"}, {"key", key}, {"kind", stored.kind()}, {"object", stored.decode()}}
                 .dump()
          << "\n";
    }
    out << json{{"op", "rv"}, {"key", ""}, {"rv", resourceVersion_}}.dump() << "\n";
  }
  std::filesystem::rename(tmp, path);
  log_ = std::fopen(path.c_str(), "a");
  history_ = std::fopen((dir_ + "/history.jsonl").c_str(), "a");
  repairHistory();
}

// The object log is the truth and the create history is derived from it, in a second file: a
// process killed between the two appends persisted an object whose history line is missing.
// Every loaded object whose uid the history lacks gets its line now (uids are unique per
// create, so nothing is counted twice).
void SimKube::repairHistory() {
  std::set<std::string> recorded;
  std::ifstream in(dir_ + "/history.jsonl");
  for (std::string line; std::getline(in, line);) {
    json entry = json::parse(line, nullptr, false);
    if (entry.is_object()) recorded.insert(entry.value("uid", ""));
  }
  for (const auto& [key, stored] : objects_) {
    const std::string& kind = stored.kind();
    const std::string& uid = stored.uid();
    if (kind == "Event" || uid.empty() || recorded.count(uid)) continue;
    const json object = stored.decode();
    json created{{"kind", kind},
                 {"namespace", nsOf(object)},
                 {"name", nameOf(object)},
                 {"uid", uid},
                 {"owners", object["metadata"].value("ownerReferences", json::array())}};
    std::string line = created.dump() + "\n";
    std::fwrite(line.data(), 1, line.size(), history_);
  }
  std::fflush(history_);
}

void SimKube::persist(const std::string& op, const std::string& key, const std::string& kind,
                      const json* object) {
  if (!log_) return;
  json entry{{"op", op}, {"key", key}, {"rv", resourceVersion_}};
  if (object) {
    entry["object"] = *object;
    entry["kind"] = kind;
  }
  std::string line = entry.dump() + "\n";
  // Written through to the kernel on every change: a killed operator process never loses a
  // write the API server acknowledged (etcd would not either).
  std::fwrite(line.data(), 1, line.size(), log_);
  std::fflush(log_);
}

void SimKube::count(const std::string& verb, const std::string& kind) {
  calls_[verb + " " + kind]++;
}

void SimKube::maybeFail(const std::string& verb, const std::string& kind, bool afterApply) {
  for (auto it = faults_.begin(); it != faults_.end(); ++it) {
    if (it->afterApply != afterApply) continue;
    if (it->verb != "*" && it->verb != verb) continue;
    if (it->kind != "*" && it->kind != kind) continue;
    FaultRule rule = *it;
    if (--it->count <= 0) faults_.erase(it);
    throw kube::ApiError(rule.code, rule.reason,
                         "injected fault on " + verb + " " + kind + ": " + rule.reason +
                             (afterApply ? " (the write was applied; the response was lost)" : ""));
  }
}

std::optional<kube::ApiError> SimKube::lostResponse(const std::string& verb,
                                                    const std::string& kind) {
  try {
    maybeFail(verb, kind, true);
  } catch (const kube::ApiError& e) {
    return e;
  }
  return std::nullopt;
}

void SimKube::clearFaults() {
  std::lock_guard lock(mu_);
  faults_.clear();
}

void SimKube::injectFault(FaultRule rule) {
  std::lock_guard lock(mu_);
  faults_.push_back(std::move(rule));
}

std::vector<json> SimKube::createHistory() const {
  std::lock_guard lock(mu_);
  std::vector<json> out;
  out.reserve(creates_.size());
  for (const auto& bytes : creates_) out.push_back(json::from_cbor(bytes));
  return out;
}

std::map<std::string, uint64_t> SimKube::callCounts() const {
  std::lock_guard lock(mu_);
  return calls_;
}

size_t SimKube::storedBytes() const {
  std::lock_guard lock(mu_);
  size_t total = 0;
  for (const auto& [key, stored] : objects_) total += stored.bytes();
  return total;
}

std::map<std::string, std::pair<size_t, size_t>> SimKube::storedByKind() const {
  std::lock_guard lock(mu_);
  std::map<std::string, std::pair<size_t, size_t>> out;
  for (const auto& [key, stored] : objects_) {
    auto& [objects, bytes] = out[stored.kind()];
    ++objects;
    bytes += stored.bytes();
  }
  return out;
}

std::optional<json> SimKube::get(const std::string& kind, const std::string& ns,
                                 const std::string& name) {
  kube::Snapshot found = getSnapshot(kind, ns, name);
  if (!found) return std::nullopt;
  return *found;
}

kube::Snapshot SimKube::getSnapshot(const std::string& kind, const std::string& ns,
                                    const std::string& name) {
  StoredObject::Handle found;
  {
    std::lock_guard lock(mu_);
    count("get", kind);
    maybeFail("get", kind, false);
    auto it = objects_.find(keyOf(kind, ns, name));
    if (it == objects_.end()) return nullptr;
    found = it->second.handle();
  }
  return found.snapshot();
}

std::vector<json> SimKube::list(const std::string& kind, const std::string& ns,
                                const std::map<std::string, std::string>& labels) {
  std::vector<StoredObject::Handle> found;
  {
    std::lock_guard lock(mu_);
    count("list", kind);
    maybeFail("list", kind, false);
    std::string prefix = kind + "/" + (ns.empty() ? "" : ns + "/");
    for (auto it = objects_.lower_bound(prefix);
         it != objects_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      if (it->second.hasLabels(labels)) found.push_back(it->second.handle());
    }
  }
  return values(found);
}

void SimKube::index(const std::string& key, const StoredObject& object, bool add) {
  for (const auto& uid : object.ownerUids()) {
    if (add) {
      dependents_[uid].insert(key);
    } else if (auto it = dependents_.find(uid); it != dependents_.end()) {
      it->second.erase(key);
      if (it->second.empty()) dependents_.erase(it);
    }
  }
}

std::vector<kube::Snapshot> SimKube::listOwned(const std::string& kind, const std::string& ns,
                                               const std::string& ownerUid) {
  std::vector<StoredObject::Handle> found;
  {
    std::lock_guard lock(mu_);
    auto it = dependents_.find(ownerUid);
    if (it == dependents_.end()) return {};
    const std::string prefix = ns.empty() ? kind + "/" : kind + "/" + ns + "/";
    for (const auto& key : it->second) {
      if (key.compare(0, prefix.size(), prefix) != 0) continue;
      auto object = objects_.find(key);
      if (object != objects_.end()) found.push_back(object->second.handle());
    }
  }
  return snapshots(found);
}

std::vector<json> SimKube::listWhere(const std::string& kind,
                                     const std::function<bool(const json&)>& filter) {
  std::vector<StoredObject::Handle> all;
  {
    std::lock_guard lock(mu_);
    std::string prefix = kind + "/";
    for (auto it = objects_.lower_bound(prefix);
         it != objects_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
      all.push_back(it->second.handle());
  }
  std::vector<json> found;
  for (const auto& h : all) {
    kube::Snapshot object = h.snapshot();
    if (filter(*object)) found.push_back(*object);
  }
  return found;
}

kube::KubeClient::Encoded SimKube::put(const std::string& kind, json object,
                                       kube::WatchEventType type, std::vector<Event>& events) {
  std::string key = keyOf(kind, nsOf(object), nameOf(object));
  object["metadata"]["resourceVersion"] = std::to_string(++resourceVersion_);
  auto snapshot = std::make_shared<const json>(std::move(object));
  StoredObject stored(kind, *snapshot);
  stored.shareWhileHeld(snapshot);
  kube::Packed packed = stored.packed();
  if (auto old = objects_.find(key); old != objects_.end()) index(key, old->second, false);
  index(key, stored, true);
  objects_.insert_or_assign(key, std::move(stored));
  persist("put", key, kind, snapshot.get());
  events.push_back({kind, type, snapshot, packed});
  return {std::move(snapshot), std::move(packed)};
}

void SimKube::erase(const std::string& key, std::vector<Event>& events) {
  auto it = objects_.find(key);
  if (it == objects_.end()) return;
  const std::string kind = it->second.kind();
  const std::string uid = it->second.uid();
  kube::Snapshot object = it->second.handle().snapshot();  // what the Deleted event carries
  index(key, it->second, false);
  objects_.erase(it);
  ++resourceVersion_;
  persist("del", key, kind, nullptr);
  specManagers_.erase(key);
  events.push_back({kind, kube::WatchEventType::Deleted, std::move(object), nullptr});
  cascade(uid, events);
}

// Background garbage collection: dependents of a deleted owner go too (finalizers respected).
void SimKube::cascade(const std::string& uid, std::vector<Event>& events) {
  if (uid.empty()) return;
  auto found = dependents_.find(uid);
  if (found == dependents_.end()) return;
  std::vector<std::string> dependents(found->second.begin(), found->second.end());
  for (const auto& key : dependents) {
    auto it = objects_.find(key);
    if (it == objects_.end()) continue;
    if (it->second.hasFinalizers())
      markDeleting(it->second, events);
    else
      erase(key, events);
  }
}

// A deletion that finalizers hold: the object gets its deletionTimestamp (once) and stays.
void SimKube::markDeleting(const StoredObject& stored, std::vector<Event>& events) {
  if (stored.deleting()) return;
  const std::string kind = stored.kind();
  json object = stored.decode();
  object["metadata"]["deletionTimestamp"] = toRfc3339(clock_.nowMs());
  put(kind, std::move(object), kube::WatchEventType::Modified, events);
}

void SimKube::finishIfUnblocked(const std::string& key, std::vector<Event>& events) {
  auto it = objects_.find(key);
  if (it == objects_.end()) return;
  if (it->second.deleting() && !it->second.hasFinalizers()) erase(key, events);
}

void SimKube::dispatch(const std::vector<Event>& events) {
  std::lock_guard lock(watchMu_);
  for (const auto& e : events) {
    auto it = watchers_.find(e.kind);
    if (it == watchers_.end()) continue;
    for (const auto& callback : it->second) callback(e.type, e.object, e.packed);
  }
}

// Every write: count it, maybe fail it before it applies, apply it, maybe lose its response,
// and deliver its watch events (also when the response is lost, as a real API server would).
template <typename Apply>
auto SimKube::write(const std::string& verb, const std::string& kind, Apply&& apply) {
  std::vector<Event> events;
  std::optional<kube::ApiError> lost;
  std::invoke_result_t<Apply, std::vector<Event>&> result;
  {
    std::lock_guard lock(mu_);
    count(verb, kind);
    maybeFail(verb, kind, false);
    result = apply(events);
    lost = lostResponse(verb, kind);
  }
  dispatch(events);
  if (lost) throw *lost;
  return result;
}

kube::Snapshot SimKube::create(const std::string& kind, json input) {
  return createEncoded(kind, std::move(input)).object;
}

kube::KubeClient::Encoded SimKube::createEncoded(const std::string& kind, json input) {
  return write("create", kind, [&](std::vector<Event>& events) {
    json object = std::move(input);
    assignGeneratedName(object, resourceVersion_ + 1);
    if (!object.contains("metadata") || nameOf(object).empty()) {
      throw kube::ApiError(422, "Invalid", kind + ": metadata.name or generateName is required");
    }
    if (!object["metadata"].contains("namespace")) object["metadata"]["namespace"] = "default";
    validate(kind, object);
    std::string key = keyOf(kind, nsOf(object), nameOf(object));
    if (objects_.count(key)) {
      throw kube::ApiError(
          409, "AlreadyExists",
          kind + " \"" + nameOf(object) + "\" already exists in namespace " + nsOf(object));
    }
    object["metadata"]["uid"] =
        "uid-" + std::to_string(resourceVersion_ + 1) + "-" + nameOf(object);
    object["metadata"]["generation"] = 1;
    object["metadata"]["creationTimestamp"] = toRfc3339(clock_.nowMs());
    object["metadata"].erase("resourceVersion");
    object["metadata"].erase("deletionTimestamp");
    // The API server ignores a new Pod's status and defaults its phase; the kubelet moves it on.
    if (kind == "Pod") object["status"] = {{"phase", "Pending"}};
    json created{{"kind", kind},
                 {"namespace", nsOf(object)},
                 {"name", nameOf(object)},
                 {"uid", object["metadata"]["uid"]},
                 {"owners", object["metadata"].value("ownerReferences", json::array())}};
    Encoded result = put(kind, std::move(object), kube::WatchEventType::Added, events);
    if (kind != "Event") {
      creates_.push_back(json::to_cbor(created));
      creates_.back().shrink_to_fit();
    }
    if (history_) {
      std::string line = created.dump() + "\n";
      std::fwrite(line.data(), 1, line.size(), history_);
      std::fflush(history_);
    }
    return result;
  });
}

// The API server's own validation that the controller depends on (batch/v1 Job pod templates
// must say how their Pods restart).
void SimKube::validate(const std::string& kind, const json& object) {
  if (kind != "Job") return;
  const json& restart = model::memberAt(
      model::memberAt(model::memberAt(model::memberAt(object, "spec"), "template"),
                           "spec"),
      "restartPolicy");
  std::string policy = restart.is_string() ? restart.get<std::string>() : "";
  if (policy != "Never" && policy != "OnFailure") {
    throw kube::ApiError(422, "Invalid",
                         "Job.batch \"" + nameOf(object) +
                             "\" is invalid: spec.template.spec.restartPolicy: Required value: "
                             "valid values: \"OnFailure\", \"Never\"");
  }
}

const StoredObject& SimKube::checkedExisting(const std::string& kind, const json& object) {
  std::string key = keyOf(kind, nsOf(object), nameOf(object));
  auto it = objects_.find(key);
  if (it == objects_.end()) {
    throw kube::ApiError(404, "NotFound",
                         kind + " " + nsOf(object) + "/" + nameOf(object) + " not found");
  }
  std::string want = object["metadata"].value("resourceVersion", "");
  if (!want.empty() && want != it->second.resourceVersion()) {
    throw kube::ApiError(409, "Conflict",
                         "Operation cannot be fulfilled on " + kind + " \"" + nameOf(object) +
                             "\": the object has been modified; please apply your changes to the "
                             "latest version and try again");
  }
  return it->second;
}

kube::Snapshot SimKube::update(const std::string& kind, json input) {
  return updateAs(kOperatorManager, kind, std::move(input));
}

kube::KubeClient::Encoded SimKube::updateEncoded(const std::string& kind, json input) {
  return updateEncodedAs(kOperatorManager, kind, std::move(input));
}

std::string SimKube::specManager(const std::string& kind, const std::string& ns,
                                 const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = specManagers_.find(keyOf(kind, ns, name));
  return it == specManagers_.end() ? "" : it->second;
}

kube::Snapshot SimKube::updateAs(const std::string& manager, const std::string& kind, json input) {
  return updateEncodedAs(manager, kind, std::move(input)).object;
}

kube::KubeClient::Encoded SimKube::updateEncodedAs(const std::string& manager,
                                                   const std::string& kind, json input) {
  return write("update", kind, [&](std::vector<Event>& events) {
    json current = checkedExisting(kind, input).decode();
    json object = std::move(input);
    object["metadata"]["uid"] = current["metadata"]["uid"];
    object["metadata"]["creationTimestamp"] = current["metadata"]["creationTimestamp"];
    if (current["metadata"].contains("deletionTimestamp"))
      object["metadata"]["deletionTimestamp"] = current["metadata"]["deletionTimestamp"];
    if (current.contains("status"))
      object["status"] = std::move(current["status"]);
    else
      object.erase("status");
    int64_t generation = current["metadata"].value("generation", int64_t(1));
    std::string key = keyOf(kind, nsOf(object), nameOf(object));
    if (model::memberAt(object, "spec") != model::memberAt(current, "spec")) {
      ++generation;
      specManagers_[key] = manager;
    }
    object["metadata"]["generation"] = generation;
    Encoded result = put(kind, std::move(object), kube::WatchEventType::Modified, events);
    finishIfUnblocked(key, events);
    return result;
  });
}

kube::Snapshot SimKube::updateStatus(const std::string& kind, json input) {
  return updateStatusEncoded(kind, input).object;
}

kube::KubeClient::Encoded SimKube::updateStatusEncoded(const std::string& kind,
                                                       const json& input) {
  return write("updateStatus", kind, [&](std::vector<Event>& events) {
    json object = checkedExisting(kind, input).decode();
    auto status = input.find("status");
    object["status"] = status != input.end() ? *status : json::object();
    return put(kind, std::move(object), kube::WatchEventType::Modified, events);
  });
}

void SimKube::remove(const std::string& kind, const std::string& ns, const std::string& name,
                     kube::Propagation propagation) {
  write("remove", kind, [&](std::vector<Event>& events) {
    std::string key = keyOf(kind, ns, name);
    auto it = objects_.find(key);
    if (it == objects_.end())
      throw kube::ApiError(404, "NotFound", kind + " " + ns + "/" + name + " not found");
    if (propagation == kube::Propagation::Orphan) orphanDependents(std::string(it->second.uid()));
    if (it->second.hasFinalizers())
      markDeleting(it->second, events);
    else
      erase(key, events);
    return kube::Snapshot();
  });
}

void SimKube::orphanDependents(const std::string& uid) {
  auto found = dependents_.find(uid);
  if (found == dependents_.end()) return;
  std::vector<std::string> keys(found->second.begin(), found->second.end());
  for (const auto& k : keys) {
    auto it = objects_.find(k);
    if (it == objects_.end()) continue;
    json dependent = it->second.decode();
    index(k, it->second, false);
    json kept = json::array();
    for (const auto& ref : dependent["metadata"]["ownerReferences"])
      if (ref.value("uid", "") != uid) kept.push_back(ref);
    dependent["metadata"]["ownerReferences"] = kept;
    StoredObject replaced(it->second.kind(), dependent);
    index(k, replaced, true);
    it->second = std::move(replaced);
  }
}

void SimKube::watch(const std::string& kind, kube::WatchCallback callback) {
  watchSnapshots(kind, [callback = std::move(callback)](kube::WatchEventType type,
                                                        const kube::Snapshot& object) {
    callback(type, *object);
  });
}

void SimKube::watchSnapshots(const std::string& kind, kube::SnapshotCallback callback) {
  watchPacked(kind, [callback = std::move(callback)](kube::WatchEventType type,
                                                     const kube::Snapshot& object,
                                                     const kube::Packed&) {
    callback(type, object);
  });
}

void SimKube::watchPacked(const std::string& kind, kube::PackedCallback callback) {
  std::vector<std::pair<StoredObject::Handle, kube::Packed>> existing;
  {
    std::lock_guard lock(mu_);
    count("list", kind);
    maybeFail("list", kind, false);
    std::string prefix = kind + "/";
    for (auto it = objects_.lower_bound(prefix);
         it != objects_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
      existing.emplace_back(it->second.handle(), it->second.packed());
  }
  std::lock_guard lock(watchMu_);
  for (const auto& [h, packed] : existing)
    callback(kube::WatchEventType::Added, h.snapshot(), packed);
  watchers_[kind].push_back(std::move(callback));
}

}  // namespace rayjournal::sim
