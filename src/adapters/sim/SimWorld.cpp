#include "adapters/sim/SimWorld.h"

#include "adapters/TimeFormat.h"
#include "model/JsonAccess.h"
#include "model/TokenAuth.h"

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

bool hasStringAt(const json& root, std::initializer_list<const char*> path, const char* expected) {
  const json* v = at(root, path);
  return v && v->is_string() && v->get_ref<const std::string&>() == expected;
}

bool jobFinished(const json& job) {
  if (const json* conditions = at(job, {"status", "conditions"})) {
    for (const auto& c : *conditions) {
      if ((hasStringAt(c, {"type"}, "Complete") || hasStringAt(c, {"type"}, "Failed")) &&
          hasStringAt(c, {"status"}, "True"))
        return true;
    }
  }
  return false;
}

// A status subresource write: the object's metadata (name, namespace, resourceVersion
// precondition) and the new status; the server keeps everything else.
json statusWrite(const json& object, json status) {
  return {{"metadata", object["metadata"]}, {"status", std::move(status)}};
}

std::string envValue(const json& container, const std::string& name) {
  for (const auto& env : model::arrayAt(container, "env")) {
    if (env.value("name", "") == name) return env.value("value", "");
  }
  return "";
}

}  // namespace

// RAY_AUTH_TOKEN as the kubelet resolves it: a value, or a key of a Secret in the namespace.
std::string SimWorld::tokenFromEnv(const json& container, const std::string& ns) {
  for (const auto& env : model::arrayAt(container, "env")) {
    if (model::stringAt(env, "name") != "RAY_AUTH_TOKEN") continue;
    const json& ref = model::objectAt(model::objectAt(env, "valueFrom"), "secretKeyRef");
    if (ref.empty()) return model::stringAt(env, "value");
    auto secret = kube_.getSnapshot("Secret", ns, model::stringAt(ref, "name"));
    if (!secret || model::stringAt(ref, "key") != model::kAuthTokenKey) return "";
    return model::tokenOfSecret(*secret);
  }
  return "";
}

SimWorld::SimWorld(SimKube& kube, SimRay& ray, const Clock& clock, SimWorldOptions options)
    : kube_(kube), ray_(ray), clock_(clock), options_(options), autoscaler_(kube, clock) {
  auto keyOf = [](const json& o) {
    return o["metadata"].value("namespace", "default") + "/" + o["metadata"].value("name", "");
  };
  kube_.watch("Pod", [this, keyOf](kube::WatchEventType type, const json& o) {
    if (type != kube::WatchEventType::Deleted) return mark(dirtyPods_, keyOf(o));
    if (model::stringAt(model::objectAt(model::objectAt(o, "metadata"), "labels"),
                        "ray.io/node-type") == "head")
      noteHeadLost(o);
  });
  kube_.watch("Job", [this, keyOf](kube::WatchEventType type, const json& o) {
    if (type != kube::WatchEventType::Deleted) mark(dirtyJobs_, keyOf(o));
  });
}

// A head Pod is gone: its GCS with it. Without fault tolerance Ray's job records were in that
// GCS's memory; with it (Redis, or the embedded store on the head's claim) the next head reads
// them back. Handled in advance(): the watch runs inside the store's write.
void SimWorld::noteHeadLost(const json& pod) {
  const json& meta = model::objectAt(pod, "metadata");
  const json& containers = model::arrayAt(model::objectAt(pod, "spec"), "containers");
  bool ft = false;
  if (!containers.empty())
    for (const auto& e : model::arrayAt(containers[0], "env"))
      ft = ft || model::stringAt(e, "name") == "RAY_REDIS_ADDRESS" ||
           (model::stringAt(e, "name") == "RAY_gcs_storage" && model::stringAt(e, "value") == "rocksdb");
  if (ft) return;
  std::lock_guard lock(dirtyMu_);
  lostHeads_.emplace(model::stringAt(meta, "namespace"),
                     model::stringAt(model::objectAt(meta, "labels"), "ray.io/cluster"));
}

void SimWorld::mark(Keys& keys, const std::string& key) {
  std::lock_guard lock(dirtyMu_);
  keys.insert(key);
}

int SimWorld::advance() {
  Keys pods, jobs, againPods, againJobs;
  std::set<std::pair<std::string, std::string>> lostHeads;
  {
    std::lock_guard lock(dirtyMu_);
    pods.swap(dirtyPods_);
    jobs.swap(dirtyJobs_);
    lostHeads.swap(lostHeads_);
  }
  for (const auto& [ns, cluster] : lostHeads) ray_.loseAllRecords(ns, cluster);
  auto split = [](const std::string& key) {
    return std::make_pair(key.substr(0, key.find('/')), key.substr(key.find('/') + 1));
  };
  int changes = 0;
  for (const auto& key : pods) {
    auto [ns, name] = split(key);
    try {
      changes += runPod(ns, name, againPods);
    } catch (const kube::ApiError&) {
      againPods.insert(key);
    }
  }
  for (const auto& key : jobs) {
    auto [ns, name] = split(key);
    try {
      auto job = kube_.getSnapshot("Job", ns, name);
      if (!job || jobFinished(*job)) continue;
      int n = runSubmitterJob(*job);
      changes += n;
      if (!n) againJobs.insert(key);  // still running: look again next round
    } catch (const kube::ApiError&) {
      againJobs.insert(key);
    }
  }
  changes += autoscaler_.advance();
  std::lock_guard lock(dirtyMu_);
  dirtyPods_.insert(againPods.begin(), againPods.end());
  dirtyJobs_.insert(againJobs.begin(), againJobs.end());
  return changes;
}

// A container in a head Pod reaches its own Ray; the simulated Ray is addressed by the Service
// that selects this Pod's cluster (what the sidecar's 127.0.0.1 means in a real Pod).
std::string SimWorld::headDashboard(const json& pod) {
  std::string ns = pod["metadata"].value("namespace", "default");
  std::string cluster = pod["metadata"]["labels"].value("ray.io/cluster", "");
  std::string ownerUid;
  for (const auto& ref : model::arrayAt(pod["metadata"], "ownerReferences"))
    if (ref.value("kind", "") == "RayCluster") ownerUid = ref.value("uid", "");
  for (const auto& svc : kube_.listOwned("Service", ns, ownerUid)) {
    if (hasStringAt(*svc, {"spec", "selector", "ray.io/cluster"}, cluster.c_str()))
      return (*svc)["metadata"].value("name", "") + "." + ns + ".svc.cluster.local:8265";
  }
  return "";
}

// The kubelet for one Pod, and the SidecarMode submitter container if the Pod has one.
int SimWorld::runPod(const std::string& ns, const std::string& name, Keys& again) {
  auto found = kube_.getSnapshot("Pod", ns, name);
  if (!found) return 0;
  const json& pod = *found;
  if (hasStringAt(pod, {"status", "phase"}, "Pending")) {
    auto created = parseRfc3339(pod["metadata"].value("creationTimestamp", ""));
    if (created && clock_.nowMs() < *created + options_.podStartDelayMs) {
      again.insert(ns + "/" + name);
      return 0;
    }
    if (claimMissing(pod)) {  // a kubelet cannot mount it: the Pod stays Pending
      again.insert(ns + "/" + name);
      return 0;
    }
    noteGcsStorage(pod);
    kube_.updateStatus(
        "Pod",
        statusWrite(pod, {{"phase", "Running"},
                          {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})},
                          {"podIP", "10.0.0.1"}}));
    return 1;
  }
  if (!hasStringAt(pod, {"status", "phase"}, "Running")) return 0;
  const json* containers = at(pod, {"spec", "containers"});
  if (!containers || !containers->is_array()) return 0;
  for (const auto& container : *containers) {
    if (hasStringAt(container, {"name"}, "ray-job-submitter"))
      return runSidecar(pod, container, again);
  }
  return 0;
}

// What the SidecarMode submitter container does in one step; an exit {code, reason} when it
// ends. Without restarts it submits (no status check, as KubeRay's sidecar command) and waits
// as `ray job submit` without --no-wait does: exit 0 or 1 with the Ray job's outcome, 1 when Ray
// no longer knows the job (a head that lost its records). With restarts (restartPolicy
// OnFailure: the SidecarSubmitterRestart command) it checks, submits --no-wait, follows the
// logs and exits 0 at any terminal status.
std::optional<std::pair<int, std::string>> SimWorld::sidecarStep(const json& pod,
                                                                 const json& container,
                                                                 bool restarts) {
  const std::string ns = model::stringAt(pod["metadata"], "namespace");
  const std::string uid = model::stringAt(pod["metadata"], "uid");
  if (sidecarBroken(pod)) return std::make_pair(1, std::string("Error"));
  const std::string token = tokenFromEnv(container, ns);
  const std::string id = envValue(container, "RAY_JOB_SUBMISSION_ID");
  try {
    auto info = ray_.getJobAs(token, headDashboard(pod), id);
    bool lost = !info && following_.count(uid);
    if (!info && !lost) {
      ray::SubmitRequest request;
      request.submissionId = id;
      ray_.submitAs(token, headDashboard(pod), request);
      following_.insert(uid);
    } else if (lost || ray::isTerminalRayStatus(info->status)) {
      following_.erase(uid);
      if (lost) return std::make_pair(1, std::string("Error"));
      bool ok = restarts || info->status == "SUCCEEDED";
      return std::make_pair(ok ? 0 : 1, std::string(ok ? "Completed" : "Error"));
    }
  } catch (const ray::RayError&) {
    // The dashboard is not up yet: the sidecar's health loop keeps waiting.
  }
  return std::nullopt;
}

// A SidecarMode submitter container in a running head Pod, as the kubelet runs it: once it
// exited it stays so, unless it exited non-zero under restartPolicy OnFailure, where it is
// started again after the kubelet's 10 s backoff (restartCount, lastState.terminated).
int SimWorld::runSidecar(json pod, const json& container, Keys& again) {
  const bool restarts = model::stringAt(container, "restartPolicy") == "OnFailure";
  const std::string key = model::stringAt(pod["metadata"], "namespace") + "/" +
                          model::stringAt(pod["metadata"], "name");
  json statuses = pod["status"].value("containerStatuses", json::array());
  json* own = nullptr;
  for (auto& cs : statuses)
    if (cs.value("name", "") == "ray-job-submitter") own = &cs;
  if (!own) {
    statuses.push_back({{"name", "ray-job-submitter"}, {"restartCount", 0},
                        {"state", {{"running", json::object()}}}});
    own = &statuses.back();
  }
  const json& ended = model::objectAt(model::objectAt(*own, "state"), "terminated");
  again.insert(key);
  if (!ended.empty()) {
    auto at = parseRfc3339(model::stringAt(ended, "finishedAt"));
    if (!restarts || ended.value("exitCode", 0) == 0) return again.erase(key), 0;
    if (at && clock_.nowMs() < *at + kPodBackoffMs) return 0;
    (*own)["lastState"] = {{"terminated", ended}};
    (*own)["restartCount"] = own->value("restartCount", 0) + 1;
    (*own)["state"] = {{"running", json::object()}};
  } else if (auto exit = sidecarStep(pod, container, restarts)) {
    (*own)["state"] = {{"terminated",
                        {{"exitCode", exit->first},
                         {"reason", exit->second},
                         {"finishedAt", toRfc3339(clock_.nowMs())}}}};
  } else {
    return 0;
  }
  pod["status"]["containerStatuses"] = statuses;
  kube_.updateStatus("Pod", pod);
  return 1;
}

// The RayJob owning a sidecar's cluster set rayjournal.io/sim-submitter: "fail" fails every
// run of the container, "fail-once" only its first (restartCount 0).
bool SimWorld::sidecarBroken(const json& pod) {
  const std::string ns = model::stringAt(pod["metadata"], "namespace");
  const std::string cluster =
      model::stringAt(model::objectAt(pod["metadata"], "labels"), "ray.io/cluster");
  auto owner = kube_.getSnapshot("RayCluster", ns, cluster);
  if (!owner) return false;
  std::string mode;
  for (const auto& ref : model::arrayAt((*owner)["metadata"], "ownerReferences")) {
    auto job = ref.value("kind", "") == "RayJob"
                   ? kube_.getSnapshot("RayJob", ns, ref.value("name", ""))
                   : nullptr;
    if (job) mode = model::stringAt(model::objectAt((*job)["metadata"], "annotations"),
                                    kSimSubmitterAnnotation);
  }
  int restartCount = 0;
  for (const auto& cs : model::arrayAt(model::objectAt(pod, "status"), "containerStatuses"))
    if (cs.value("name", "") == "ray-job-submitter") restartCount = cs.value("restartCount", 0);
  return mode == "fail" || (mode == "fail-once" && restartCount == 0);
}

// The owning RayJob's rayjournal.io/sim-submitter annotation "fail" makes every submitter pod fail.
bool SimWorld::submitterBroken(const json& job) {
  for (const auto& ref : model::arrayAt(job["metadata"], "ownerReferences")) {
    if (ref.value("kind", "") != "RayJob") continue;
    auto owner = kube_.getSnapshot("RayJob", job["metadata"].value("namespace", "default"),
                                   ref.value("name", ""));
    if (owner && model::stringAt(
                     model::objectAt(model::objectAt(*owner, "metadata"), "annotations"),
                     kSimSubmitterAnnotation) == "fail")
      return true;
  }
  return false;
}

// The submitter Pod's shell in one step: at its start `ray job status || { ray job submit ||
// ray job status; }` (W17), then `ray job logs --follow`, which ends with the Ray job
// ("Complete", exit 0 whatever the outcome) or breaks when Ray no longer knows the job: the Pod
// fails, and the next Pod (after the Job controller's backoff) checks and submits again, as
// KubeRay's does after a head restart. Throws RayError when the Pod fails.
std::string SimWorld::submitterShell(const json& job, const std::string& uid) {
  if (submitterBroken(job)) throw ray::RayError("submitter pod exited with code 1 (simulated)");
  const json& container = job["spec"]["template"]["spec"]["containers"][0];
  std::string dashboard = envValue(container, "RAY_DASHBOARD_ADDRESS");
  std::string id = envValue(container, "RAY_JOB_SUBMISSION_ID");
  const std::string token =
      tokenFromEnv(container, model::stringAt(job["metadata"], "namespace"));
  std::optional<ray::JobInfo> info;
  if (following_.count(uid)) {
    try {
      info = ray_.getJobAs(token, dashboard, id);
    } catch (const ray::RayError&) {
      return "";  // a blip the log stream rides out
    }
    if (!info) {
      following_.erase(uid);
      nextPodAtMs_[uid] = clock_.nowMs() + kPodBackoffMs;
      throw ray::RayError("ray job logs --follow: job " + id + " not found (stream broke)");
    }
    return ray::isTerminalRayStatus(info->status) ? "Complete" : "";
  }
  bool statusFailed = false;
  try {
    info = ray_.getJobAs(token, dashboard, id);
  } catch (const ray::RayError&) {
    statusFailed = true;
  }
  if (!info) {
    ray::SubmitRequest request;
    request.submissionId = id;
    request.entrypoint = container.value("args", json::array()).dump();
    if (ray_.submitAs(token, dashboard, request) == ray::SubmitResult::AlreadyExists &&
        statusFailed)
      info = ray_.getJobAs(token, dashboard, id);  // the second check; a failure fails the pod
  }
  following_.insert(uid);
  return info && ray::isTerminalRayStatus(info->status) ? "Complete" : "";
}

void SimWorld::replaceSubmitterPod(const json& submitterJob) {
  std::string uid = model::stringAt(model::objectAt(submitterJob, "metadata"), "uid");
  following_.erase(uid);
  std::lock_guard lock(dirtyMu_);
  dirtyJobs_.insert(model::stringAt(submitterJob["metadata"], "namespace") + "/" +
                    model::stringAt(submitterJob["metadata"], "name"));
}

// A head Pod whose GCS keeps its tables in Redis (RAY_REDIS_ADDRESS and a storage namespace in
// its Ray container's env) writes them there as it starts.
void SimWorld::noteGcsStorage(const json& pod) {
  const json& containers = model::arrayAt(model::objectAt(pod, "spec"), "containers");
  if (containers.empty()) return;
  std::string address, storageNamespace;
  for (const auto& e : model::arrayAt(containers[0], "env")) {
    if (model::stringAt(e, "name") == "RAY_REDIS_ADDRESS") address = model::stringAt(e, "value");
    if (model::stringAt(e, "name") == "RAY_external_storage_namespace")
      storageNamespace = model::stringAt(e, "value");
  }
  if (!address.empty() && !storageNamespace.empty()) ray_.writeStorageNamespace(storageNamespace);
}

bool SimWorld::claimMissing(const json& pod) {
  const std::string& ns = model::stringAt(model::objectAt(pod, "metadata"), "namespace");
  for (const auto& volume : model::arrayAt(model::objectAt(pod, "spec"), "volumes")) {
    const std::string& claim = model::stringAt(model::objectAt(volume, "persistentVolumeClaim"), "claimName");
    if (!claim.empty() && !kube_.getSnapshot("PersistentVolumeClaim", ns, claim)) return true;
  }
  return false;
}

bool SimWorld::isRedisCleanupJob(const json& job) {
  return model::stringAt(model::objectAt(model::objectAt(job, "metadata"), "labels"),
                         "ray.io/node-type") == "redis-cleanup";
}

// A GCS fault-tolerant cluster's Redis cleanup Job: Ray's cleanup_redis_storage empties the
// storage namespace its head Pod's env names (the simulated Redis lives in SimRay).
std::string SimWorld::runRedisCleanup(const json& job) {
  const json& spec = model::objectAt(model::objectAt(model::objectAt(job, "spec"), "template"), "spec");
  const json& containers = model::arrayAt(spec, "containers");
  std::string storageNamespace;
  if (!containers.empty())
    for (const auto& e : model::arrayAt(containers[0], "env"))
      if (model::stringAt(e, "name") == "RAY_external_storage_namespace")
        storageNamespace = model::stringAt(e, "value");
  ray_.dropStorageNamespace(storageNamespace);
  return "Complete";
}

// One step of a submitter Job: start its Pod, run the shell; the Job retries failed Pods up to
// spec.backoffLimit and then fails.
int SimWorld::runSubmitterJob(const json& job) {
  const json& status = model::objectAt(job, "status");
  for (const auto& c : model::arrayAt(status, "conditions")) {
    if ((c["type"] == "Complete" || c["type"] == "Failed") && c["status"] == "True") return 0;
  }
  int64_t now = clock_.nowMs();
  auto created = parseRfc3339(job["metadata"].value("creationTimestamp", ""));
  if (created && now < *created + options_.submitterStartDelayMs) return 0;
  const std::string uid = model::stringAt(job["metadata"], "uid");
  if (auto at = nextPodAtMs_.find(uid); at != nextPodAtMs_.end() && now < at->second) return 0;
  json next = status;
  if (!next.contains("startTime")) next["startTime"] = toRfc3339(now);
  next["active"] = 1;
  std::string condition;
  try {
    condition = isRedisCleanupJob(job) ? runRedisCleanup(job) : submitterShell(job, uid);
  } catch (const ray::RayError& e) {
    int failed = next.value("failed", 0) + 1;
    next["failed"] = failed;
    if (failed > job["spec"].value("backoffLimit", 2)) {
      condition = "Failed";
      next["conditions"] = json::array({{{"type", "Failed"},
                                         {"status", "True"},
                                         {"reason", "BackoffLimitExceeded"},
                                         {"message", "Job has reached the specified backoff limit"},
                                         {"lastTransitionTime", toRfc3339(now)}}});
    }
  }
  if (condition == "Complete") {
    next["succeeded"] = 1;
    next["conditions"] = json::array(
        {{{"type", "Complete"}, {"status", "True"}, {"lastTransitionTime", toRfc3339(now)}}});
  }
  if (!condition.empty()) {
    next["active"] = 0;
    next["completionTime"] = toRfc3339(now);
    following_.erase(uid);
    nextPodAtMs_.erase(uid);
  }
  if (next == status) return 0;
  kube_.updateStatus("Job", statusWrite(job, std::move(next)));
  return 1;
}

}  // namespace rayjournal::sim
