// Simulated Ray dashboards, one per RayCluster in a SimKube: submission-id dedup with Ray's own
// "already exists" text, PENDING -> RUNNING -> terminal driven by the owning RayJob's
// annotations, stop, and 404 for unknown ids. A dashboard answers only while its RayCluster
// exists and is ready. State lives in the SimKube store (kind SimRaySubmission, owned by the
// RayCluster), so it persists with it and vanishes with the cluster. Thread-safe.
#pragma once

#include <map>
#include <set>

#include "adapters/ray/RayJobsClient.h"
#include "adapters/sim/SimKube.h"

namespace rayjournal::sim {

inline constexpr const char* kSimDurationAnnotation = "rayjournal.io/sim-duration";
inline constexpr const char* kSimResultAnnotation = "rayjournal.io/sim-result";
inline constexpr const char* kSimSubmitterAnnotation = "rayjournal.io/sim-submitter";

class SimRay : public ray::RayJobsClient {
 public:
  SimRay(SimKube& kube, const Clock& clock) : kube_(kube), clock_(clock) {}

  std::optional<ray::JobInfo> getJob(const std::string& dashboard,
                                     const std::string& submissionId) override;
  ray::SubmitResult submit(const std::string& dashboard,
                           const ray::SubmitRequest& request) override;
  bool stop(const std::string& dashboard, const std::string& submissionId) override;
  // The operator's token for a dashboard; a token-auth cluster refuses calls without the token
  // its Secret holds (401), as Ray does.
  void useAuthToken(const std::string& dashboard, const std::string& token) override;
  // The calls of a Pod in the simulated world, with the token its env gave it.
  std::optional<ray::JobInfo> getJobAs(const std::string& token, const std::string& dashboard,
                                       const std::string& submissionId);
  ray::SubmitResult submitAs(const std::string& token, const std::string& dashboard,
                             const ray::SubmitRequest& request);

  // Fault injection: the next n calls fail as if the dashboard were unreachable.
  void failNextCalls(int n);
  // The next n submissions are refused with HTTP 500 (the dashboard answers other calls).
  void failNextSubmissions(int n);
  // A head restart without GCS fault tolerance: every job record of that cluster is lost.
  void loseAllRecords(const std::string& ns, const std::string& cluster);
  uint64_t submissions() const { return submissions_; }
  // The simulated Redis of GCS fault tolerance: a storage namespace holds keys from the time a
  // head Pod with FT runs its GCS until Ray's cleanup_redis_storage empties it.
  void writeStorageNamespace(const std::string& storageNamespace);
  void dropStorageNamespace(const std::string& storageNamespace);
  std::set<std::string> storageNamespaces();
  // How long a submitted job stays PENDING before RUNNING (default 100 ms).
  void setPendingMs(int64_t ms) { pendingMs_ = ms; }

 private:
  kube::Snapshot clusterFor(const std::string& dashboard, std::string& ns);
  void maybeFail(const std::string& dashboard);
  ray::JobInfo infoOf(const json& record) const;
  std::string registeredToken(const std::string& dashboard);
  void checkToken(const json& cluster, const std::string& dashboard, const std::string& token);

  SimKube& kube_;
  const Clock& clock_;
  std::mutex mu_;
  std::mutex submitMu_;
  int failCalls_ = 0;
  int failSubmissions_ = 0;
  std::atomic<uint64_t> submissions_{0};
  int64_t pendingMs_ = 100;
  std::map<std::string, std::string> tokens_;  // dashboard -> the operator's token (mu_)
  std::set<std::string> redis_;                // non-empty storage namespaces (mu_)
};

// Parses "<svc>.<ns>.svc.<domain>:<port>" (with or without http://) into the Service name and
// namespace; the simulated Ray finds the cluster through that Service's selector, as DNS would.
bool parseDashboardAddress(const std::string& dashboard, std::string& service, std::string& ns);

}  // namespace rayjournal::sim
