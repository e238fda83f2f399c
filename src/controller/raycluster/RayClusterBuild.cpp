#include "controller/raycluster/RayClusterBuild.h"

#include "model/TokenAuth.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "adapters/TimeFormat.h"
#include "controller/JsonAccess.h"
#include "controller/raycluster/GcsFaultTolerance.h"
#include "controller/raycluster/RayClusterMeta.h"
#include "model/Names.h"
#include "model/Quantity.h"

namespace rayjournal::controller {

json ownedMeta(const std::string& name, const json& cluster, json labels) {
  const json& meta = objectAt(cluster, "metadata");
  const std::string& ns = stringAt(meta, "namespace");
  return {{"name", name},
          {"namespace", ns.empty() ? "default" : ns},
          {"labels", std::move(labels)},
          {"ownerReferences", json::array({{{"apiVersion", "ray.io/v1"},
                                            {"kind", "RayCluster"},
                                            {"name", stringAt(meta, "name")},
                                            {"uid", stringAt(meta, "uid")},
                                            {"controller", true},
                                            {"blockOwnerDeletion", true}}})}};
}

std::string checkLabel(std::string value) {
  if (value.size() > 63) value = value.substr(value.size() - 63);
  if (!value.empty() && std::ispunct(static_cast<unsigned char>(value[0]))) value[0] = 'r';
  return value;
}

std::string identifierLabel(const std::string& cluster, const std::string& nodeType) {
  return checkLabel(cluster + "-" + nodeType);
}

std::string headServiceFqdn(const RayClusterView& cluster) {
  const json& doc = cluster.raw.get();
  const std::string& ns = stringAt(objectAt(doc, "metadata"), "namespace");
  return headServiceNameOf(cluster.name, objectAt(doc, "spec")) + "." +
         (ns.empty() ? "default" : ns) + ".svc." + cluster.clusterDomain;
}

bool containerHasEnv(const json& container, const std::string& name) {
  for (const auto& e : arrayAt(container, "env"))
    if (stringAt(e, "name") == name) return true;
  return false;
}

json fieldEnv(const std::string& name, const std::string& fieldPath) {
  return {{"name", name}, {"valueFrom", {{"fieldRef", {{"fieldPath", fieldPath}}}}}};
}

json bashCommand(const std::string& flags, bool loginShell) {
  return json::array({"/bin/bash", "-" + flags + (loginShell ? "l" : ""), "--"});
}

int64_t integerAt(const json& object, const char* key, int64_t fallback) {
  const json& v = memberAt(object, key);
  return v.is_number_integer() ? v.get<int64_t>() : fallback;
}

std::string textOf(const json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

std::optional<model::Quantity> quantityOf(const json& value) {
  return value.is_null() ? std::nullopt : model::parseQuantity(textOf(value));
}

bool isGpuResourceKey(const std::string& key) {
  return (key.size() >= 3 && key.compare(key.size() - 3, 3, "gpu") == 0) ||
         key.rfind("nvidia.com/mig-", 0) == 0;
}

namespace {

// The head container's named ports (unnamed ones as "<n>-port"), else KubeRay's defaults, and
// always a metrics port (getServicePorts).
std::map<std::string, int64_t> headServicePorts(const json& clusterSpec) {
  std::map<std::string, int64_t> ports;
  const json& containers = arrayAt(
      objectAt(objectAt(objectAt(clusterSpec, "headGroupSpec"), "template"), "spec"), "containers");
  if (!containers.empty()) {
    for (const auto& p : arrayAt(containers[0], "ports")) {
      const json& number = memberAt(p, "containerPort");
      if (!number.is_number_integer()) continue;
      std::string name = stringAt(p, "name");
      ports[name.empty() ? std::to_string(number.get<int64_t>()) + "-port" : name] = number;
    }
  }
  if (ports.empty())
    ports = {{"client", 10001}, {"gcs-server", 6379}, {"dashboard", 8265}, {"serve", 8000}};
  ports.try_emplace("metrics", 8080);
  return ports;
}

json headServiceLabels(const std::string& cluster) {
  return {{"ray.io/cluster", cluster},
          {"ray.io/node-type", "head"},
          {"ray.io/identifier", identifierLabel(cluster, "head")},
          {"app.kubernetes.io/name", "kuberay"},
          {"app.kubernetes.io/created-by", "kuberay-operator"}};
}

// The user's headService: KubeRay's selector, labels over the user's, our ports after theirs
// (one the user already declared by name or number is not added twice: the API server would
// refuse a duplicate), the namespace forced, name and type defaulted.
json customHeadService(json svc, const json& labels, json ports, const std::string& name,
                       const json& clusterMeta, const std::string& serviceType) {
  json& meta = svc["metadata"];
  if (!meta.is_object()) meta = json::object();
  meta["labels"] = meta.contains("labels") && meta["labels"].is_object() ? meta["labels"]
                                                                          : json::object();
  meta["labels"].update(labels);
  meta["name"] = name;
  meta["namespace"] = stringAt(clusterMeta, "namespace");
  json& spec = svc["spec"];
  if (!spec.is_object()) spec = json::object();
  spec["selector"] = labels;
  json& own = spec["ports"];
  if (!own.is_array()) own = json::array();
  for (auto& p : ports) {
    bool taken = std::any_of(own.begin(), own.end(), [&](const json& o) {
      return stringAt(o, "name") == stringAt(p, "name") || memberAt(o, "port") == p["port"];
    });
    if (!taken) own.push_back(std::move(p));
  }
  if (stringAt(spec, "type").empty() && !serviceType.empty()) spec["type"] = serviceType;
  return svc;
}

}  // namespace

model::ApiObject authSecretFor(const RayClusterView& cluster) {
  json meta = ownedMeta(cluster.authSecret, cluster.raw.get(), {{"ray.io/cluster", cluster.name}});
  return std::make_shared<json>(json{{"apiVersion", "v1"},
                                     {"kind", "Secret"},
                                     {"metadata", std::move(meta)},
                                     {"stringData", {{model::kAuthTokenKey, ""}}}});
}

model::ApiObject headServiceFor(const RayClusterView& cluster) {
  const json& doc = cluster.raw.get();
  const json& spec = objectAt(doc, "spec");
  const json& headGroup = objectAt(spec, "headGroupSpec");
  const std::string& serviceType = stringAt(headGroup, "serviceType");
  json labels = headServiceLabels(cluster.name);
  json ports = json::array();
  for (const auto& [name, port] : headServicePorts(spec))
    ports.push_back({{"name", name}, {"port", port}, {"appProtocol", "tcp"}});
  std::string name = headServiceNameOf(cluster.name, spec);
  json meta = ownedMeta(name, doc, labels);
  const json& custom = memberAt(headGroup, "headService");
  if (custom.is_object()) {
    json svc = customHeadService(custom, labels, std::move(ports), name, meta, serviceType);
    svc["apiVersion"] = "v1";
    svc["kind"] = "Service";
    svc["metadata"]["ownerReferences"] = meta["ownerReferences"];
    return std::make_shared<json>(std::move(svc));
  }
  json svcSpec = {{"selector", labels}, {"ports", std::move(ports)}};
  if (!serviceType.empty()) svcSpec["type"] = serviceType;
  if (serviceType.empty() || serviceType == "ClusterIP") {
    // At most one head Pod: no virtual IP needed, and its address is published before Ready.
    svcSpec["clusterIP"] = "None";
    svcSpec["publishNotReadyAddresses"] = true;
  }
  return std::make_shared<json>(json{{"apiVersion", "v1"},
                                     {"kind", "Service"},
                                     {"metadata", std::move(meta)},
                                     {"spec", std::move(svcSpec)}});
}

model::ApiObject gcsStorageClaimObjectFor(const RayClusterView& cluster) {
  return std::make_shared<json>(gcsStorageClaimFor(cluster.raw.get()));
}

}  // namespace rayjournal::controller
