#include "adapters/ray/RayHttpClient.h"

#include <algorithm>

namespace rayjournal::ray {
namespace {

using nlohmann::json;

std::string errorText(const std::string& dashboard, const std::string& what,
                      const http::HttpResponse& res) {
  std::string body =
      res.body.size() > 300 ? "..." + res.body.substr(res.body.size() - 300) : res.body;
  return "Ray dashboard " + dashboard + ": " + what + " answered " + std::to_string(res.status) +
         ": " + body;
}

}  // namespace

std::string serviceProxyPath(const std::string& dashboard, const std::string& target) {
  std::string address =
      dashboard.substr(dashboard.find("://") == std::string::npos ? 0 : dashboard.find("://") + 3);
  auto colon = address.rfind(':');
  std::string host = address.substr(0, colon);
  std::string port = colon == std::string::npos ? "8265" : address.substr(colon + 1);
  auto firstDot = host.find('.');
  auto secondDot = firstDot == std::string::npos ? firstDot : host.find('.', firstDot + 1);
  bool svcSuffix = secondDot != std::string::npos && host.compare(secondDot, 4, ".svc") == 0 &&
                   (secondDot + 4 == host.size() || host[secondDot + 4] == '.');
  if (!svcSuffix)
    throw RayError("Ray dashboard address " + dashboard +
                   " is not a Service address (<svc>.<namespace>.svc...); cannot use the "
                   "Kubernetes service proxy");
  std::string svc = host.substr(0, firstDot),
              ns = host.substr(firstDot + 1, secondDot - firstDot - 1);
  return "/api/v1/namespaces/" + ns + "/services/" + svc + ":" + port + "/proxy" + target;
}

std::shared_ptr<http::HttpClient> RayHttpClient::clientFor(const std::string& dashboard) {
  std::string address = options_.dashboardOverride.empty() ? dashboard : options_.dashboardOverride;
  std::lock_guard lock(mu_);
  auto found = clients_.find(address);
  if (found == clients_.end()) {
    if (clients_.size() >= std::max<size_t>(1, options_.maxDashboardClients)) {
      auto oldest = std::min_element(clients_.begin(), clients_.end(), [](auto& a, auto& b) {
        return a.second.lastUse < b.second.lastUse;
      });
      clients_.erase(oldest);  // its sockets close when its last call returns
    }
    std::string url = address.find("://") == std::string::npos ? "http://" + address : address;
    found = clients_
                .emplace(address, KeptClient{std::make_shared<http::HttpClient>(
                                                 url, http::TlsConfig{}, options_.timeout)})
                .first;
  }
  found->second.lastUse = ++uses_;
  return found->second.client;
}

size_t RayHttpClient::dashboardClients() {
  std::lock_guard lock(mu_);
  return clients_.size();
}

void RayHttpClient::useAuthToken(const std::string& dashboard, const std::string& token) {
  std::lock_guard lock(mu_);
  if (token.empty())
    clusterTokens_.erase(dashboard);
  else
    clusterTokens_[dashboard] = token;
}

http::HttpResponse RayHttpClient::call(const std::string& dashboard, const std::string& method,
                                       const std::string& target, const std::string& body) {
  http::Headers headers{{"Accept", "application/json"}};
  if (!body.empty()) headers["Content-Type"] = "application/json";
  if (!options_.authToken.empty()) headers["Authorization"] = "Bearer " + options_.authToken;
  {
    std::lock_guard lock(mu_);
    auto token = clusterTokens_.find(dashboard);
    // KubeRay's header: Authorization would be taken by the API server's service proxy.
    if (token != clusterTokens_.end()) headers["x-ray-authorization"] = "Bearer " + token->second;
  }
  try {
    if (options_.kubernetesProxy)
      return options_.kubernetesProxy(method, serviceProxyPath(dashboard, target), body, headers);
    return clientFor(dashboard)->request(method, target, body, headers);
  } catch (const http::HttpError& e) {
    throw RayError(std::string("Ray dashboard unreachable: ") + e.what());
  }
}

std::optional<JobInfo> RayHttpClient::getJob(const std::string& dashboard,
                                             const std::string& submissionId) {
  auto res = call(dashboard, "GET", "/api/jobs/" + submissionId);
  if (res.status == 404) return std::nullopt;
  if (res.status != 200) throw RayError(errorText(dashboard, "GET job " + submissionId, res));
  json doc = json::parse(res.body, nullptr, false);
  if (!doc.is_object())
    throw RayError("Ray dashboard " + dashboard + ": job " + submissionId + " is not JSON");
  JobInfo info;
  info.submissionId = submissionId;
  info.status = doc.value("status", "");
  if (doc["message"].is_string()) info.message = doc["message"];
  if (doc["start_time"].is_number()) info.startTimeMs = doc["start_time"].get<uint64_t>();
  if (doc["end_time"].is_number()) info.endTimeMs = doc["end_time"].get<uint64_t>();
  return info;
}

SubmitResult RayHttpClient::submit(const std::string& dashboard, const SubmitRequest& request) {
  json body{{"entrypoint", request.entrypoint}, {"submission_id", request.submissionId}};
  if (!request.runtimeEnv.is_null()) body["runtime_env"] = request.runtimeEnv;
  if (!request.metadata.empty()) body["metadata"] = request.metadata;
  if (request.entrypointNumCpus > 0) body["entrypoint_num_cpus"] = request.entrypointNumCpus;
  if (request.entrypointNumGpus > 0) body["entrypoint_num_gpus"] = request.entrypointNumGpus;
  if (!request.entrypointResources.empty())
    body["entrypoint_resources"] = request.entrypointResources;
  auto res = call(dashboard, "POST", "/api/jobs/", body.dump());
  if (res.status == 200) return SubmitResult::Submitted;
  if (res.body.find("already exists") != std::string::npos) return SubmitResult::AlreadyExists;
  throw RayError(errorText(dashboard, "submit " + request.submissionId, res));
}

bool RayHttpClient::stop(const std::string& dashboard, const std::string& submissionId) {
  auto res = call(dashboard, "POST", "/api/jobs/" + submissionId + "/stop");
  if (res.status == 404) return false;
  if (res.status != 200) throw RayError(errorText(dashboard, "stop " + submissionId, res));
  return true;
}

std::string RayHttpClient::version(const std::string& dashboard) {
  auto res = call(dashboard, "GET", "/api/version");
  json doc = json::parse(res.body, nullptr, false);
  if (res.status != 200 || !doc.is_object())
    throw RayError(errorText(dashboard, "GET /api/version", res));
  return doc.value("ray_version", "");
}

bool RayHttpClient::deleteJob(const std::string& dashboard, const std::string& submissionId) {
  auto res = call(dashboard, "DELETE", "/api/jobs/" + submissionId);
  if (res.status == 404) return false;
  if (res.status != 200) throw RayError(errorText(dashboard, "delete " + submissionId, res));
  return true;
}

std::string RayHttpClient::logs(const std::string& dashboard, const std::string& submissionId) {
  auto res = call(dashboard, "GET", "/api/jobs/" + submissionId + "/logs");
  if (res.status != 200) throw RayError(errorText(dashboard, "logs " + submissionId, res));
  json doc = json::parse(res.body, nullptr, false);
  return doc.is_object() ? doc.value("logs", "") : "";
}

}  // namespace rayjournal::ray
