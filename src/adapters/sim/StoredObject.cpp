#include "adapters/sim/StoredObject.h"

namespace rayjournal::sim {
namespace {

const kube::json& member(const kube::json& object, const char* name) {
  static const kube::json none;
  if (!object.is_object()) return none;
  auto it = object.find(name);
  return it == object.end() ? none : *it;
}

std::string stringMember(const kube::json& object, const char* name) {
  const kube::json& value = member(object, name);
  return value.is_string() ? value.get<std::string>() : "";
}

}  // namespace

// The bytes without the encoder's spare capacity (kube::pack): kept as they came, they had 66 MB
// of it at the peak of a 10,000-RayJob benchmark (heaptrack).
StoredObject::StoredObject(std::string kind, const kube::json& object)
    : kind_(std::move(kind)), bytes_(kube::pack(object)) {
  const kube::json& meta = member(object, "metadata");
  resourceVersion_ = stringMember(meta, "resourceVersion");
  uid_ = stringMember(meta, "uid");
  if (const kube::json& labels = member(meta, "labels"); labels.is_object())
    for (const auto& [key, value] : labels.items())
      if (value.is_string()) labels_.emplace_back(key, value.get<std::string>());
  if (const kube::json& refs = member(meta, "ownerReferences"); refs.is_array())
    for (const auto& ref : refs) ownerUids_.push_back(stringMember(ref, "uid"));
  const kube::json& finalizers = member(meta, "finalizers");
  hasFinalizers_ = finalizers.is_array() && !finalizers.empty();
  deleting_ = meta.is_object() && meta.contains("deletionTimestamp");
}

bool StoredObject::hasLabels(const std::map<std::string, std::string>& labels) const {
  for (const auto& [key, value] : labels) {
    bool found = false;
    for (const auto& [k, v] : labels_) found = found || (k == key && v == value);
    if (!found) return false;
  }
  return true;
}

StoredObject::Handle StoredObject::handle() const {
  Handle h;
  h.live_ = decoded_.lock();
  if (!h.live_) h.bytes_ = bytes_;
  return h;
}

kube::Snapshot StoredObject::Handle::snapshot() const {
  if (live_) return live_;
  return std::make_shared<const kube::json>(kube::json::from_cbor(*bytes_));
}

kube::json StoredObject::decode() const {
  return *handle().snapshot();
}

}  // namespace rayjournal::sim
