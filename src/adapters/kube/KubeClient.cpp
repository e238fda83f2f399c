#include "adapters/kube/KubeClient.h"

namespace rayjournal::kube {
namespace {

// Any ownerReference naming uid: the owner index's notion (controller::ownedBy asks for the
// controlling owner, which adoption needs).
bool ownedByUid(const json& object, const std::string& uid) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return false;
  auto refs = meta->find("ownerReferences");
  if (refs == meta->end() || !refs->is_array()) return false;
  for (const auto& ref : *refs) {
    auto it = ref.find("uid");
    if (it != ref.end() && it->is_string() && it->get_ref<const std::string&>() == uid) return true;
  }
  return false;
}

}  // namespace

std::string KubeClient::specManager(const std::string&, const std::string&, const std::string&) {
  return "";
}

std::string newestSpecManager(const json& managedFields) {
  if (!managedFields.is_array()) return "";
  std::string manager, newest;
  for (const auto& entry : managedFields) {
    if (!entry.is_object() || !entry.value("subresource", std::string()).empty()) continue;
    auto fields = entry.find("fieldsV1");
    if (fields == entry.end() || !fields->is_object() || !fields->contains("f:spec")) continue;
    auto time = entry.find("time");
    std::string at = time != entry.end() && time->is_string() ? time->get<std::string>() : "";
    auto name = entry.find("manager");
    if (at < newest || name == entry.end() || !name->is_string()) continue;
    newest = at;  // RFC 3339 in UTC, one format: the strings order as the times
    manager = name->get<std::string>();
  }
  return manager;
}

std::vector<Snapshot> KubeClient::listOwned(const std::string& kind, const std::string& ns,
                                            const std::string& ownerUid) {
  std::vector<Snapshot> out;
  for (auto& o : list(kind, ns))
    if (ownedByUid(o, ownerUid)) out.push_back(snapshotOf(std::move(o)));
  return out;
}

void KubeClient::forEachOwned(const std::string& kind, const std::string& ns,
                              const std::string& ownerUid,
                              const std::function<void(const json&)>& visit) {
  for (const auto& o : listOwned(kind, ns, ownerUid)) visit(*o);
}

}  // namespace rayjournal::kube
