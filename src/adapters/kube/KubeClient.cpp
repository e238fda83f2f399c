#include "adapters/kube/KubeClient.h"

#include <algorithm>

namespace rayjournal::kube {
Packed pack(const json& object) {
  std::vector<uint8_t> bytes = json::to_cbor(object);
  bytes.shrink_to_fit();
  return std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
}

std::vector<std::string> ownerUidsOf(const json& object) {
  std::vector<std::string> uids;
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return uids;
  auto refs = meta->find("ownerReferences");
  if (refs == meta->end() || !refs->is_array()) return uids;
  for (const auto& ref : *refs) {
    auto uid = ref.find("uid");
    if (uid != ref.end() && uid->is_string()) uids.push_back(uid->get<std::string>());
  }
  return uids;
}

namespace {

// Any ownerReference naming uid (controller::ownedBy asks for the controlling owner, which
// adoption needs).
bool ownedByUid(const json& object, const std::string& uid) {
  const auto uids = ownerUidsOf(object);
  return std::find(uids.begin(), uids.end(), uid) != uids.end();
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

std::vector<std::optional<ApiError>> KubeClient::postAll(const std::string& kind,
                                                         std::vector<json> objects) {
  std::vector<std::optional<ApiError>> errors(objects.size());
  for (size_t i = 0; i < objects.size(); ++i) {
    try {
      post(kind, std::move(objects[i]));
    } catch (const ApiError& e) {
      errors[i] = e;
    } catch (const std::exception& e) {
      errors[i] = ApiError(0, "Unreachable", e.what());
    }
  }
  return errors;
}

void KubeClient::forEachOwned(const std::string& kind, const std::string& ns,
                              const std::string& ownerUid,
                              const std::function<void(const json&)>& visit) {
  for (const auto& o : listOwned(kind, ns, ownerUid)) visit(*o);
}

}  // namespace rayjournal::kube
