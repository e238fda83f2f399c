#include "adapters/sim/SimWorld.h"

#include "adapters/TimeFormat.h"

namespace rayjournal::sim {
namespace {

// The value at a path of object keys, or nullptr; never copies.
const json* at(const json& root, std::initializer_list<const char*> path) {
  const json* node = &root;
  for (const char* key : path) {
    if (!node->is_object()) return nullptr;
    auto it = node->find(key);
    if (it == node->end()) return nullptr;
    node = &*it;
  }
  return node;
}

bool stringAt(const json& root, std::initializer_list<const char*> path, const char* expected) {
  const json* v = at(root, path);
  return v && v->is_string() && v->get_ref<const std::string&>() == expected;
}

bool exists(SimKube& kube, const std::string& kind, const std::string& ns, const std::string& name) {
  return kube.get(kind, ns, name).has_value();
}

// Creates unless present; a concurrent creator winning is fine.
int ensure(SimKube& kube, const std::string& kind, const json& object) {
  if (exists(kube, kind, object["metadata"]["namespace"], object["metadata"]["name"])) return 0;
  try {
    kube.create(kind, object);
    return 1;
  } catch (const kube::ApiError& e) {
    if (!e.alreadyExists()) throw;
    return 0;
  }
}

std::string envValue(const json& container, const std::string& name) {
  for (const auto& env : container.value("env", json::array())) {
    if (env.value("name", "") == name) return env.value("value", "");
  }
  return "";
}

}  // namespace

json SimWorld::ownedMeta(const std::string& name, const json& owner, const std::string& kind, json labels) {
  return {{"name", name},
          {"namespace", owner["metadata"]["namespace"]},
          {"labels", std::move(labels)},
          {"ownerReferences",
           json::array({{{"apiVersion", "ray.io/v1"}, {"kind", kind}, {"name", owner["metadata"]["name"]},
                         {"uid", owner["metadata"]["uid"]}, {"controller", true}, {"blockOwnerDeletion", true}}})}};
}

int SimWorld::advance() {
  int changes = 0;
  try {
    changes += provisionClusters();
    changes += runKubelet();
    changes += runSubmitterJobs();
    changes += runSidecars();
  } catch (const kube::ApiError&) {
    // An injected API fault hit a simulated actor; it simply tries again on the next advance.
  }
  return changes;
}

int SimWorld::provisionClusters() {
  int changes = 0;
  // A cluster whose resourceVersion has not moved since it was last found settled needs nothing.
  auto clusters = kube_.listWhere("RayCluster", [this](const json& c) {
    const json& meta = c["metadata"];
    if (meta.contains("deletionTimestamp")) return false;
    const json* uid = at(meta, {"uid"});
    auto it = uid ? settled_.find(uid->get_ref<const std::string&>()) : settled_.end();
    return it == settled_.end() || !stringAt(meta, {"resourceVersion"}, it->second.c_str());
  });
  for (auto cluster : clusters) {
    std::string c = cluster["metadata"]["name"];
    std::string ns = cluster["metadata"]["namespace"];
    json labels{{"ray.io/cluster", c}, {"app.kubernetes.io/created-by", "kuberay-operator"}};
    json head = labels;
    head["ray.io/node-type"] = "head";
    head["ray.io/group"] = "headgroup";
    changes += ensure(kube_, "Service", {{"apiVersion", "v1"}, {"kind", "Service"},
                                         {"metadata", ownedMeta(c + "-head-svc", cluster, "RayCluster", head)},
                                         {"spec", {{"clusterIP", "None"}, {"selector", head},
                                                   {"ports", json::array({{{"name", "dashboard"}, {"port", 8265}}})}}}});
    std::vector<std::string> pods{c + "-head"};
    json headSpec = cluster["spec"].value("headGroupSpec", json::object()).value("template", json::object()).value("spec", json::object());
    bool noRestart = cluster["metadata"].value("annotations", json::object()).value("ray.io/disable-provisioned-head-restart", "") == "true";
    if (!(noRestart && cluster.value("status", json::object()).value("state", "") == "ready")) {
      changes += ensure(kube_, "Pod", {{"apiVersion", "v1"}, {"kind", "Pod"},
                                       {"metadata", ownedMeta(c + "-head", cluster, "RayCluster", head)},
                                       {"spec", headSpec},
                                       {"status", {{"phase", "Pending"}}}});
    }
    int desiredWorkers = 0;
    for (const auto& group : cluster["spec"].value("workerGroupSpecs", json::array())) {
      if (group.value("suspend", false)) {
        for (const auto& pod : kube_.list("Pod", ns, {{"ray.io/cluster", c}, {"ray.io/group", group.value("groupName", "workers")}})) {
          kube_.remove("Pod", ns, pod["metadata"]["name"]);
          ++changes;
        }
        continue;
      }
      int replicas = group.value("replicas", group.value("minReplicas", 0)) * group.value("numOfHosts", 1);
      json worker = labels;
      worker["ray.io/node-type"] = "worker";
      worker["ray.io/group"] = group.value("groupName", "workers");
      for (int i = 0; i < replicas; ++i) {
        std::string name = c + "-" + group.value("groupName", "workers") + "-worker-" + std::to_string(i);
        pods.push_back(name);
        changes += ensure(kube_, "Pod", {{"apiVersion", "v1"}, {"kind", "Pod"},
                                         {"metadata", ownedMeta(name, cluster, "RayCluster", worker)},
                                         {"status", {{"phase", "Pending"}}}});
      }
      desiredWorkers += replicas;
    }
    int ready = 0;
    for (const auto& name : pods) {
      auto pod = kube_.get("Pod", ns, name);
      if (pod && (*pod)["status"].value("phase", "") == "Running") ++ready;
    }
    json status = cluster.value("status", json::object());
    bool allReady = ready == int(pods.size());
    std::string state = allReady || status.value("state", "") == "ready" ? "ready" : "";
    json next = status;
    next["desiredWorkerReplicas"] = desiredWorkers;
    next["readyWorkerReplicas"] = std::max(0, ready - 1);
    next["availableWorkerReplicas"] = std::max(0, ready - 1);
    next["head"] = {{"podName", c + "-head"}, {"serviceName", c + "-head-svc"}};
    if (!state.empty()) next["state"] = state;
    if (next != status) {
      cluster["status"] = next;
      cluster = kube_.updateStatus("RayCluster", cluster);
      ++changes;
    }
    if (allReady) settled_[cluster["metadata"].value("uid", "")] = cluster["metadata"].value("resourceVersion", "");
  }
  return changes;
}

int SimWorld::runKubelet() {
  int changes = 0;
  int64_t now = clock_.nowMs();
  for (auto pod : kube_.listWhere("Pod", [](const json& p) { return stringAt(p, {"status", "phase"}, "Pending"); })) {
    auto created = parseRfc3339(pod["metadata"].value("creationTimestamp", ""));
    if (created && now < *created + options_.podStartDelayMs) continue;
    pod["status"] = {{"phase", "Running"},
                     {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})},
                     {"podIP", "10.0.0.1"}};
    kube_.updateStatus("Pod", pod);
    ++changes;
  }
  return changes;
}

// A SidecarMode submitter container in a running head Pod: submit (no status check, as
// KubeRay's sidecar command), then exit 0 or 1 with the Ray job's outcome.
int SimWorld::runSidecars() {
  int changes = 0;
  auto heads = kube_.listWhere("Pod", [](const json& p) {
    if (!stringAt(p, {"status", "phase"}, "Running")) return false;
    const json* containers = at(p, {"spec", "containers"});
    if (!containers || !containers->is_array()) return false;
    for (const auto& c : *containers) {
      if (stringAt(c, {"name"}, "ray-job-submitter")) return true;
    }
    return false;
  });
  for (auto pod : heads) {
    json containers = pod.value("spec", json::object()).value("containers", json::array());
    for (const auto& container : containers) {
      if (container.value("name", "") != "ray-job-submitter") continue;
      json statuses = pod["status"].value("containerStatuses", json::array());
      bool terminated = false;
      for (const auto& cs : statuses) terminated = terminated || (cs.value("name", "") == "ray-job-submitter" && cs["state"].contains("terminated"));
      if (terminated) continue;
      std::string dashboard = pod["metadata"]["labels"].value("ray.io/cluster", "") + "-head-svc." + pod["metadata"].value("namespace", "default") + ".svc.cluster.local:8265";
      std::string id = envValue(container, "RAY_JOB_SUBMISSION_ID");
      try {
        auto info = ray_.getJob(dashboard, id);
        if (!info) {
          ray::SubmitRequest request;
          request.submissionId = id;
          request.metadata[kAttemptMetadataKey] = envValue(container, "RAYJOURNAL_ATTEMPT");
          ray_.submit(dashboard, request);
        } else if (ray::isTerminalRayStatus(info->status)) {
          statuses.push_back({{"name", "ray-job-submitter"},
                              {"state", {{"terminated", {{"exitCode", info->status == "SUCCEEDED" ? 0 : 1},
                                                         {"finishedAt", toRfc3339(clock_.nowMs())}}}}}});
          pod["status"]["containerStatuses"] = statuses;
          kube_.updateStatus("Pod", pod);
          ++changes;
        }
      } catch (const ray::RayError&) {
        // The dashboard is not up yet: the sidecar's health loop keeps waiting.
      }
    }
  }
  return changes;
}

// The owning RayJob's rayjournal.io/sim-submitter annotation "fail" makes every submitter pod fail.
bool SimWorld::submitterBroken(const json& job) {
  for (const auto& ref : job["metadata"].value("ownerReferences", json::array())) {
    if (ref.value("kind", "") != "RayJob") continue;
    auto owner = kube_.get("RayJob", job["metadata"].value("namespace", "default"), ref.value("name", ""));
    if (owner && (*owner)["metadata"].value("annotations", json::object()).value(kSimSubmitterAnnotation, "") == "fail") return true;
  }
  return false;
}

int SimWorld::runSubmitterJobs() {
  int changes = 0;
  auto active = kube_.listWhere("Job", [](const json& j) {
    if (const json* conditions = at(j, {"status", "conditions"})) {
      for (const auto& c : *conditions) {
        if ((stringAt(c, {"type"}, "Complete") || stringAt(c, {"type"}, "Failed")) && stringAt(c, {"status"}, "True")) return false;
      }
    }
    return stringAt(j, {"metadata", "labels", "app.kubernetes.io/created-by"}, "kuberay-operator");
  });
  for (auto job : active) changes += runSubmitterJob(std::move(job));
  return changes;
}

// One step of a submitter Job: start, then (idempotently) submit, then wait for a terminal
// Ray status and complete. An unreachable dashboard fails the pod; the Job retries pods up to
// spec.backoffLimit and then fails.
int SimWorld::runSubmitterJob(json job) {
  json status = job.value("status", json::object());
  for (const auto& c : status.value("conditions", json::array())) {
    if ((c["type"] == "Complete" || c["type"] == "Failed") && c["status"] == "True") return 0;
  }
  int64_t now = clock_.nowMs();
  auto created = parseRfc3339(job["metadata"].value("creationTimestamp", ""));
  if (created && now < *created + options_.submitterStartDelayMs) return 0;
  const json& container = job["spec"]["template"]["spec"]["containers"][0];
  std::string dashboard = envValue(container, "RAY_DASHBOARD_ADDRESS");
  std::string id = envValue(container, "RAY_JOB_SUBMISSION_ID");
  std::string attempt = envValue(container, "RAYJOURNAL_ATTEMPT");
  json next = status;
  if (!next.contains("startTime")) next["startTime"] = toRfc3339(now);
  next["active"] = 1;
  std::string condition;
  try {
    if (submitterBroken(job)) throw ray::RayError("submitter pod exited with code 1 (simulated)");
    auto info = ray_.getJob(dashboard, id);
    if (!info) {
      ray::SubmitRequest request;
      request.submissionId = id;
      request.entrypoint = container.value("args", json::array()).dump();
      if (!attempt.empty()) request.metadata[kAttemptMetadataKey] = attempt;
      ray_.submit(dashboard, request);
    } else if (ray::isTerminalRayStatus(info->status)) {
      condition = "Complete";  // `ray job logs --follow` exits 0 even when the Ray job failed
    }
  } catch (const ray::RayError& e) {
    int failed = next.value("failed", 0) + 1;
    next["failed"] = failed;
    if (failed > job["spec"].value("backoffLimit", 2)) {
      condition = "Failed";
      next["conditions"] = json::array({{{"type", "Failed"}, {"status", "True"}, {"reason", "BackoffLimitExceeded"},
                                         {"message", "Job has reached the specified backoff limit"},
                                         {"lastTransitionTime", toRfc3339(now)}}});
    }
  }
  if (condition == "Complete") {
    next["succeeded"] = 1;
    next["conditions"] = json::array({{{"type", "Complete"}, {"status", "True"}, {"lastTransitionTime", toRfc3339(now)}}});
  }
  if (!condition.empty()) {
    next["active"] = 0;
    next["completionTime"] = toRfc3339(now);
  }
  if (next == status) return 0;
  job["status"] = next;
  kube_.updateStatus("Job", job);
  return 1;
}

}  // namespace rayjournal::sim
