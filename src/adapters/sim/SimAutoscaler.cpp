#include "adapters/sim/SimAutoscaler.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "model/JsonAccess.h"
#include "model/Quantity.h"
#include "model/Syntax.h"

namespace rayjournal::sim {
namespace {

using model::arrayAt;
using model::memberAt;
using model::objectAt;
using model::stringAt;

// The field manager of its writes, as the API server names the real one's (its user agent).
constexpr const char* kManager = "ray-autoscaler (simulated)";

bool running(const json& pod) {
  if (stringAt(objectAt(pod, "status"), "phase") != "Running") return false;
  if (!memberAt(objectAt(pod, "metadata"), "deletionTimestamp").is_null()) return false;
  for (const auto& c : arrayAt(objectAt(pod, "status"), "conditions"))
    if (stringAt(c, "type") == "Ready") return stringAt(c, "status") == "True";
  return false;
}

// The CPUs a Ray node offers: --num-cpus of its `ray start`, else the container's CPU limit.
int64_t cpusOf(const json& container) {
  for (const auto& arg : arrayAt(container, "args")) {
    if (!arg.is_string()) continue;
    if (auto cpus = model::digitsAfter(arg.get_ref<const std::string&>(), "--num-cpus="))
      return *cpus;
  }
  const json& limit = memberAt(objectAt(objectAt(container, "resources"), "limits"), "cpu");
  if (limit.is_string())
    if (auto q = model::parseQuantity(limit.get<std::string>())) return q->ceilValue();
  return 1;
}

// What one Pod of a worker group will offer, from the group's spec (before its Pods exist).
int64_t groupCpus(const json& group) {
  const json& params = objectAt(group, "rayStartParams");
  const json& cpus = memberAt(params, "num-cpus");
  if (cpus.is_string()) return std::max<int64_t>(0, std::atoll(cpus.get<std::string>().c_str()));
  const json& containers = arrayAt(objectAt(objectAt(group, "template"), "spec"), "containers");
  return containers.empty() ? 1 : cpusOf(containers[0]);
}

int64_t intAt(const json& o, const char* key, int64_t fallback) {
  const json& v = memberAt(o, key);
  return v.is_number_integer() ? v.get<int64_t>() : fallback;
}

int64_t idleTimeoutMs(const json& spec, const json& group) {
  int64_t seconds = intAt(group, "idleTimeoutSeconds", -1);
  if (seconds < 0) seconds = intAt(objectAt(spec, "autoscalerOptions"), "idleTimeoutSeconds", -1);
  return seconds < 0 ? kDefaultIdleTimeoutMs : seconds * 1000;
}

bool hasAutoscalerSidecar(const json& pod) {
  for (const auto& c : arrayAt(objectAt(pod, "spec"), "containers"))
    if (stringAt(c, "name") == "autoscaler") return true;
  return false;
}

}  // namespace

// "cpu=N" with N of 1 to 6 digits and blanks allowed around each part; 0 for anything else.
int64_t parseCpuDemand(const std::string& annotation) {
  std::string_view rest = annotation;
  auto skipBlanks = [&] {
    while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front())))
      rest.remove_prefix(1);
  };
  auto take = [&](std::string_view word) {
    skipBlanks();
    if (!rest.starts_with(word)) return false;
    rest.remove_prefix(word.size());
    return true;
  };
  if (!take("cpu") || !take("=")) return 0;
  skipBlanks();
  size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
  if (digits == 0 || digits > 6) return 0;
  int64_t cpus = std::stoll(std::string(rest.substr(0, digits)));
  rest.remove_prefix(digits);
  skipBlanks();
  return rest.empty() ? cpus : 0;
}

SimAutoscaler::SimAutoscaler(SimKube& kube, const Clock& clock) : kube_(kube), clock_(clock) {
  kube_.watch("RayCluster", [this](kube::WatchEventType type, const json& o) {
    const std::string key = stringAt(o["metadata"], "namespace") + "/" + stringAt(o["metadata"], "name");
    std::lock_guard lock(mu_);
    if (type != kube::WatchEventType::Deleted && memberAt(objectAt(o, "spec"), "enableInTreeAutoscaling") == true)
      clusters_.insert(key);
  });
}

int SimAutoscaler::advance() {
  std::set<std::string> clusters;
  {
    std::lock_guard lock(mu_);
    clusters = clusters_;
  }
  int changes = 0;
  for (const auto& key : clusters) {
    const std::string ns = key.substr(0, key.find('/')), name = key.substr(key.find('/') + 1);
    try {
      changes += step(ns, name);
    } catch (const kube::ApiError&) {
      // A conflicting write (409) or a cluster going away: the next round reads it again.
    }
  }
  return changes;
}

SimAutoscaler::Capacity SimAutoscaler::capacityOf(const std::string& ns, const std::string& name) {
  Capacity capacity;
  for (const auto& pod : kube_.list("Pod", ns, {{"ray.io/cluster", name}})) {
    const json& labels = objectAt(pod["metadata"], "labels");
    const bool worker = stringAt(labels, "ray.io/node-type") == "worker";
    if (worker && memberAt(pod["metadata"], "deletionTimestamp").is_null())
      capacity.workers[stringAt(labels, "ray.io/group")].insert(stringAt(pod["metadata"], "name"));
    const json& containers = arrayAt(objectAt(pod, "spec"), "containers");
    if (running(pod) && !containers.empty()) capacity.readyCpus += cpusOf(containers[0]);
  }
  return capacity;
}

// Jobs that waited for CPUs start once the ready nodes offer what all running jobs ask; returns
// the CPUs the cluster's unfinished jobs ask for.
int64_t SimAutoscaler::startWaitingJobs(const std::string& ns, const std::string& name, int64_t readyCpus) {
  int64_t wanted = 0;
  std::vector<json> waiting;
  for (auto& record : kube_.list("SimRaySubmission", ns)) {
    if (stringAt(record["metadata"], "name").rfind(name + ".", 0) != 0) continue;
    const json& spec = record["spec"];
    const int64_t cpus = intAt(spec, "demandCpus", 0);
    if (cpus <= 0 || spec.contains("stoppedMs")) continue;
    const int64_t started = intAt(spec, "satisfiedMs", -1);
    if (started >= 0 && clock_.nowMs() >= started + intAt(spec, "durationMs", 0)) continue;  // done
    wanted += cpus;
    if (started < 0) waiting.push_back(std::move(record));
  }
  if (wanted > readyCpus) return wanted;
  for (auto& record : waiting) {
    record["spec"]["satisfiedMs"] = clock_.nowMs();
    kube_.update("SimRaySubmission", std::move(record));
  }
  return wanted;
}

int SimAutoscaler::step(const std::string& ns, const std::string& name) {
  auto found = kube_.get("RayCluster", ns, name);
  if (!found || !memberAt(objectAt(*found, "metadata"), "deletionTimestamp").is_null()) {
    std::lock_guard lock(mu_);
    clusters_.erase(ns + "/" + name);
    idleSinceMs_.erase(ns + "/" + name);
    return 0;
  }
  json& cluster = *found;
  auto heads = kube_.list("Pod", ns, {{"ray.io/cluster", name}, {"ray.io/node-type", "head"}});
  if (heads.empty() || !running(heads[0]) || !hasAutoscalerSidecar(heads[0])) return 0;
  const json& headContainers = arrayAt(objectAt(heads[0], "spec"), "containers");
  const int64_t headCpus = headContainers.empty() ? 0 : cpusOf(headContainers[0]);
  Capacity capacity = capacityOf(ns, name);
  const int64_t wanted = startWaitingJobs(ns, name, capacity.readyCpus);
  const std::string key = ns + "/" + name;
  if (wanted > 0) idleSinceMs_.erase(key);
  else idleSinceMs_.emplace(key, clock_.nowMs());
  bool changed = clearDeleted(cluster, capacity);
  if (wanted > 0) changed = scaleUp(cluster, wanted, headCpus) || changed;
  else changed = scaleDown(cluster, capacity) || changed;
  if (!changed) return 0;
  kube_.updateAs(kManager, "RayCluster", std::move(cluster));  // resourceVersion precondition: 409 retries
  return 1;
}

// Replicas raised group by group, each up to its maxReplicas, until the planned CPUs cover the
// demand (the real autoscaler's bin packing, for one resource).
bool SimAutoscaler::scaleUp(json& cluster, int64_t demand, int64_t headCpus) {
  int64_t planned = headCpus;
  json& groups = cluster["spec"]["workerGroupSpecs"];
  for (const auto& group : groups)
    planned += intAt(group, "replicas", 0) * std::max<int64_t>(1, intAt(group, "numOfHosts", 1)) * groupCpus(group);
  bool changed = false;
  for (auto& group : groups) {
    const int64_t perReplica = std::max<int64_t>(1, intAt(group, "numOfHosts", 1)) * groupCpus(group);
    if (perReplica <= 0) continue;
    int64_t replicas = intAt(group, "replicas", 0);
    const int64_t max = intAt(group, "maxReplicas", replicas);
    while (planned < demand && replicas < max) {
      ++replicas;
      planned += perReplica;
      changed = true;
    }
    group["replicas"] = replicas;
  }
  return changed;
}

// After the idle timeout: replicas down to minReplicas, the surplus Pods named for deletion.
bool SimAutoscaler::scaleDown(json& cluster, const Capacity& capacity) {
  const std::string key = stringAt(cluster["metadata"], "namespace") + "/" + stringAt(cluster["metadata"], "name");
  const int64_t idleFor = clock_.nowMs() - idleSinceMs_[key];
  bool changed = false;
  for (auto& group : cluster["spec"]["workerGroupSpecs"]) {
    if (!arrayAt(objectAt(group, "scaleStrategy"), "workersToDelete").empty()) continue;
    const int64_t min = intAt(group, "minReplicas", 0), replicas = intAt(group, "replicas", 0);
    if (replicas <= min || idleFor < idleTimeoutMs(cluster["spec"], group)) continue;
    auto pods = capacity.workers.find(stringAt(group, "groupName"));
    json names = json::array();
    if (pods != capacity.workers.end()) {
      const int64_t keep = min * std::max<int64_t>(1, intAt(group, "numOfHosts", 1));
      int64_t surplus = int64_t(pods->second.size()) - keep;
      // The real autoscaler names idle nodes, in no order the operator could guess; the lowest
      // names here, where the operator's own surplus rule would take the highest.
      for (auto it = pods->second.begin(); it != pods->second.end() && surplus > 0; ++it, --surplus)
        names.push_back(*it);
    }
    group["replicas"] = min;
    group["scaleStrategy"] = {{"workersToDelete", std::move(names)}};
    changed = true;
  }
  return changed;
}

// Once every Pod it named is gone, the autoscaler clears workersToDelete (the operator never does).
bool SimAutoscaler::clearDeleted(json& cluster, const Capacity& capacity) {
  bool changed = false;
  for (auto& group : cluster["spec"]["workerGroupSpecs"]) {
    const json& listed = arrayAt(objectAt(group, "scaleStrategy"), "workersToDelete");
    if (listed.empty()) continue;
    auto pods = capacity.workers.find(stringAt(group, "groupName"));
    const bool gone = std::none_of(listed.begin(), listed.end(), [&](const json& n) {
      return pods != capacity.workers.end() && n.is_string() && pods->second.count(n.get<std::string>());
    });
    if (!gone) continue;
    group["scaleStrategy"]["workersToDelete"] = json::array();
    changed = true;
  }
  return changed;
}

}  // namespace rayjournal::sim
