// The RayJobsClient over the real Ray Jobs REST API of a dashboard (http://host:8265).
// The dashboard argument of each call is the address from the RayJob's status
// ("<svc>.<ns>.svc.cluster.local:8265"); dashboardOverride replaces it for every call (tests and
// out-of-cluster runs reach the head at 127.0.0.1:8265). "already exists" on submit is
// recognised by Ray's text whatever the status code (Ray answers 500 for it).
// Thread-safe; calls block until Ray answers or the timeout passes.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "adapters/http/HttpClient.h"
#include "adapters/ray/RayJobsClient.h"

namespace rayjournal::ray {

// Sends one request somewhere else (the API server's service proxy): method, path, body, headers.
using RayTransport = std::function<http::HttpResponse(const std::string&, const std::string&,
                                                      const std::string&, const http::Headers&)>;

struct RayHttpOptions {
  std::string dashboardOverride;  // host:port; empty: use the address given
  // When set (--use-kubernetes-proxy), every call goes through the API server's service proxy
  // to the head Service named in the dashboard address, instead of straight to it.
  RayTransport kubernetesProxy;
  std::string authToken;  // Ray >= 2.52 token auth (Authorization: Bearer)
  std::chrono::milliseconds timeout{5000};
  // The HTTP clients (each with its pooled keep-alive connections, open file descriptors) kept
  // for this many dashboards, the most recently used; another dashboard's replaces the least
  // recently used. A finished RayCluster's dashboard is never called again: without the bound,
  // a long-running operator would keep a client and its sockets for every cluster it ever ran.
  // Above this many RayJobs polled at once, a poll may connect afresh (plain HTTP, no TLS).
  size_t maxDashboardClients = 256;
};

// "/api/v1/namespaces/NS/services/SVC:PORT/proxy" + target, for a dashboard address
// "SVC.NS.svc[.domain]:PORT"; throws RayError when the address does not name a Service.
std::string serviceProxyPath(const std::string& dashboard, const std::string& target);

class RayHttpClient : public RayJobsClient {
 public:
  explicit RayHttpClient(RayHttpOptions options) : options_(std::move(options)) {}

  std::optional<JobInfo> getJob(const std::string& dashboard,
                                const std::string& submissionId) override;
  SubmitResult submit(const std::string& dashboard, const SubmitRequest& request) override;
  bool stop(const std::string& dashboard, const std::string& submissionId) override;
  void useAuthToken(const std::string& dashboard, const std::string& token) override;
  // GET /api/version: the Ray version string.
  std::string version(const std::string& dashboard);
  std::string logs(const std::string& dashboard, const std::string& submissionId);
  // DELETE /api/jobs/{id}: true when deleted, false when Ray does not know the id; Ray refuses
  // (RayError) a job that is not terminal.
  bool deleteJob(const std::string& dashboard, const std::string& submissionId);
  // How many dashboards' HTTP clients are kept now (at most options.maxDashboardClients).
  size_t dashboardClients();

 private:
  http::HttpResponse call(const std::string& dashboard, const std::string& method,
                          const std::string& target, const std::string& body = "");
  // Shared: a call keeps its client alive even when another dashboard's evicts it meanwhile.
  std::shared_ptr<http::HttpClient> clientFor(const std::string& dashboard);

  struct KeptClient {
    std::shared_ptr<http::HttpClient> client;
    uint64_t lastUse = 0;
  };
  RayHttpOptions options_;
  std::mutex mu_;
  std::map<std::string, KeptClient> clients_;  // dashboard address -> client (under mu_)
  uint64_t uses_ = 0;                          // (under mu_)
  std::map<std::string, std::string> clusterTokens_;  // dashboard -> token (under mu_)
};

}  // namespace rayjournal::ray
