#include "adapters/sim/SimRay.h"

#include "model/TokenAuth.h"

#include <sstream>

#include <algorithm>
#include <limits>

#include "adapters/TimeFormat.h"
#include "adapters/sim/SimAutoscaler.h"
#include "model/JsonAccess.h"

namespace rayjournal::sim {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

std::string recordName(const std::string& cluster, const std::string& id) {
  return cluster + "." + id;
}

}  // namespace

bool parseDashboardAddress(const std::string& dashboard, std::string& service, std::string& ns) {
  std::string host = dashboard;
  if (host.rfind("http://", 0) == 0) host = host.substr(7);
  host = host.substr(0, host.find(':'));
  auto parts = split(host, '.');
  if (parts.size() < 2 || parts[0].empty() || parts[1].empty()) return false;
  service = parts[0];
  ns = parts[1];
  return true;
}

void SimRay::failNextCalls(int n) {
  std::lock_guard lock(mu_);
  failCalls_ = n;
}

void SimRay::failNextSubmissions(int n) {
  std::lock_guard lock(mu_);
  failSubmissions_ = n;
}

void SimRay::maybeFail(const std::string& dashboard) {
  std::lock_guard lock(mu_);
  if (failCalls_ > 0) {
    --failCalls_;
    throw ray::RayError("Ray dashboard " + dashboard +
                        " unreachable: connection refused (injected)");
  }
}

kube::Snapshot SimRay::clusterFor(const std::string& dashboard, std::string& ns) {
  maybeFail(dashboard);
  std::string service;
  if (!parseDashboardAddress(dashboard, service, ns))
    throw ray::RayError("malformed Ray dashboard address \"" + dashboard + "\"");
  // What cluster DNS does: the Service's name leads to the head its selector picks.
  auto svc = kube_.getSnapshot("Service", ns, service);
  const std::string cluster =
      svc ? model::stringAt(
                model::objectAt(model::objectAt(*svc, "spec"), "selector"),
                "ray.io/cluster")
          : "";
  if (cluster.empty())
    throw ray::RayError("Ray dashboard " + dashboard + " unreachable: no such host");
  auto object = kube_.getSnapshot("RayCluster", ns, cluster);
  if (!object || (*object)["metadata"].contains("deletionTimestamp") ||
      model::stringAt(model::objectAt(*object, "status"), "state") != "ready") {
    throw ray::RayError("Ray dashboard " + dashboard + " unreachable: connection refused");
  }
  return object;
}

ray::JobInfo SimRay::infoOf(const json& record) const {
  ray::JobInfo info;
  const json& s = record["spec"];
  info.submissionId = s["submissionId"];
  int64_t now = clock_.nowMs();
  int64_t submitted = s["submittedMs"];
  int64_t started = submitted + pendingMs_;
  // A job that asks for CPUs (rayjournal.io/sim-demand) runs once the autoscaler found them.
  const bool waitsForCpus = s.value("demandCpus", int64_t(0)) > 0;
  if (waitsForCpus && s.contains("satisfiedMs")) started = std::max(started, s["satisfiedMs"].get<int64_t>());
  int64_t ends = waitsForCpus && !s.contains("satisfiedMs")
                     ? std::numeric_limits<int64_t>::max()
                     : started + s.value("durationMs", int64_t(0));
  if (s.contains("stoppedMs")) {
    info.status = "STOPPED";
    info.message = "Job was intentionally stopped.";
    info.startTimeMs = submitted;
    info.endTimeMs = s["stoppedMs"];
  } else if (now < submitted + pendingMs_) {
    info.status = "PENDING";
    info.message = "Job has not started yet.";
  } else if (now < ends) {
    info.status = "RUNNING";
    info.message = "Job is currently running.";
    info.startTimeMs = submitted + pendingMs_;
  } else {
    info.status = s["result"];
    info.startTimeMs = submitted + pendingMs_;
    info.endTimeMs = ends;
    info.message = info.status == "SUCCEEDED"
                       ? "Job finished successfully."
                       : "Job failed: entrypoint exited with code 1 (simulated)";
  }
  return info;
}

void SimRay::useAuthToken(const std::string& dashboard, const std::string& token) {
  std::lock_guard lock(mu_);
  tokens_[dashboard] = token;
}

std::string SimRay::registeredToken(const std::string& dashboard) {
  std::lock_guard lock(mu_);
  auto it = tokens_.find(dashboard);
  return it == tokens_.end() ? "" : it->second;
}

// A token-auth cluster's dashboard answers 401 to a caller without its Secret's token.
void SimRay::checkToken(const json& cluster, const std::string& dashboard,
                        const std::string& token) {
  const std::string name = model::stringAt(cluster["metadata"], "name");
  const std::string secretName = model::tokenAuthSecretName(model::objectAt(cluster, "spec"), name);
  if (secretName.empty()) return;
  auto secret = kube_.getSnapshot("Secret", model::stringAt(cluster["metadata"], "namespace"),
                                  secretName);
  const std::string expected = secret ? model::tokenOfSecret(*secret) : "";
  if (expected.empty() || token != expected)
    throw ray::RayError("Ray dashboard " + dashboard + ": HTTP 401 Unauthorized (" +
                        (token.empty() ? "no token" : "wrong token") + ")");
}

std::optional<ray::JobInfo> SimRay::getJob(const std::string& dashboard,
                                           const std::string& submissionId) {
  return getJobAs(registeredToken(dashboard), dashboard, submissionId);
}

ray::SubmitResult SimRay::submit(const std::string& dashboard, const ray::SubmitRequest& request) {
  return submitAs(registeredToken(dashboard), dashboard, request);
}

std::optional<ray::JobInfo> SimRay::getJobAs(const std::string& token,
                                             const std::string& dashboard,
                                             const std::string& submissionId) {
  std::string ns;
  kube::Snapshot cluster = clusterFor(dashboard, ns);
  checkToken(*cluster, dashboard, token);
  auto record = kube_.getSnapshot("SimRaySubmission", ns,
                                  recordName((*cluster)["metadata"]["name"], submissionId));
  if (!record) return std::nullopt;
  return infoOf(*record);
}

ray::SubmitResult SimRay::submitAs(const std::string& token, const std::string& dashboard,
                                   const ray::SubmitRequest& request) {
  {
    std::lock_guard lock(mu_);
    if (failSubmissions_ > 0 && failSubmissions_--)
      throw ray::RayError("Ray dashboard " + dashboard +
                          " refused the submission: HTTP 500 (injected)");
  }
  std::string ns;
  kube::Snapshot clusterSnapshot = clusterFor(dashboard, ns);
  const json& cluster = *clusterSnapshot;
  checkToken(cluster, dashboard, token);
  std::string clusterName = cluster["metadata"]["name"];
  std::lock_guard lock(submitMu_);
  if (kube_.getSnapshot("SimRaySubmission", ns, recordName(clusterName, request.submissionId))) {
    return ray::SubmitResult::AlreadyExists;
  }
  // Outcome and duration come from the RayJob that owns the cluster.
  int64_t durationMs = 1000;
  int64_t demandCpus = 0;
  std::string result = "SUCCEEDED";
  for (const auto& ref : model::arrayAt(cluster["metadata"], "ownerReferences")) {
    if (ref.value("kind", "") != "RayJob") continue;
    auto owner = kube_.getSnapshot("RayJob", ns, ref["name"]);
    if (!owner) continue;
    const json& annotations = model::objectAt((*owner)["metadata"], "annotations");
    if (auto d = parseDurationMs(annotations.value(kSimDurationAnnotation, "1s"))) durationMs = *d;
    demandCpus = parseCpuDemand(annotations.value(kSimDemandAnnotation, ""));
    auto results = split(annotations.value(kSimResultAnnotation, "SUCCEEDED"), ',');
    // The attempt this submission belongs to: the owner's failed attempts so far, plus one
    // (the operator creates an attempt's cluster only after it recorded the previous failure).
    const json& ownerStatus = model::objectAt(*owner, "status");
    const json& failed = model::memberAt(ownerStatus, "failed");
    size_t attempt = 1 + (failed.is_number_integer() && failed.get<int64_t>() > 0 ? failed.get<size_t>() : 0);
    if (!results.empty()) result = results[std::min(attempt, results.size()) - 1];
    while (!result.empty() && result.front() == ' ') result.erase(0, 1);
  }
  json record{{"apiVersion", "sim.rayjournal.io/v1"},
              {"kind", "SimRaySubmission"},
              {"metadata",
               {{"name", recordName(clusterName, request.submissionId)},
                {"namespace", ns},
                {"ownerReferences", json::array({{{"kind", "RayCluster"},
                                                  {"name", clusterName},
                                                  {"uid", cluster["metadata"]["uid"]}}})}}},
              {"spec",
               {{"submissionId", request.submissionId},
                {"entrypoint", request.entrypoint},
                {"submittedMs", clock_.nowMs()},
                {"durationMs", durationMs},
                {"demandCpus", demandCpus},
                {"result", result}}}};
  kube_.create("SimRaySubmission", std::move(record));
  ++submissions_;
  return ray::SubmitResult::Submitted;
}

bool SimRay::stop(const std::string& dashboard, const std::string& submissionId) {
  std::string ns;
  kube::Snapshot cluster = clusterFor(dashboard, ns);
  checkToken(*cluster, dashboard, registeredToken(dashboard));
  auto record =
      kube_.get("SimRaySubmission", ns, recordName((*cluster)["metadata"]["name"], submissionId));
  if (!record) return false;
  if (ray::isTerminalRayStatus(infoOf(*record).status)) return true;
  (*record)["spec"]["stoppedMs"] = clock_.nowMs();
  kube_.update("SimRaySubmission", *record);
  return true;
}

void SimRay::writeStorageNamespace(const std::string& storageNamespace) {
  std::lock_guard lock(mu_);
  redis_.insert(storageNamespace);
}

void SimRay::dropStorageNamespace(const std::string& storageNamespace) {
  std::lock_guard lock(mu_);
  redis_.erase(storageNamespace);
}

std::set<std::string> SimRay::storageNamespaces() {
  std::lock_guard lock(mu_);
  return redis_;
}

void SimRay::loseAllRecords(const std::string& ns, const std::string& cluster) {
  for (const auto& record : kube_.list("SimRaySubmission", ns)) {
    std::string name = record["metadata"]["name"];
    if (name.rfind(cluster + ".", 0) == 0) kube_.remove("SimRaySubmission", ns, name);
  }
}

}  // namespace rayjournal::sim

namespace rayjournal::ray {
bool isTerminalRayStatus(const std::string& status) {
  return status == "SUCCEEDED" || status == "FAILED" || status == "STOPPED";
}
}  // namespace rayjournal::ray
