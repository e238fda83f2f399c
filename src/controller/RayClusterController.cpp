#include "controller/RayClusterController.h"

#include <spdlog/spdlog.h>

namespace rayjournal::controller {

RayClusterController::RayClusterController(kube::KubeClient& kube, const Clock& clock, int workers)
    : kube_(kube), queue_(clock), workers_(workers) {}

RayClusterController::~RayClusterController() {
  stop();
}

void RayClusterController::start() {
  kube_.watch("RayCluster", [this](kube::WatchEventType type, const json& o) {
    if (type == kube::WatchEventType::Deleted) return;
    queue_.add(o["metadata"].value("namespace", "default") + "/" + o["metadata"].value("name", ""));
  });
  kube_.watch("Pod", [this](kube::WatchEventType, const json& o) {
    auto labels = o["metadata"].value("labels", json::object());
    if (labels.contains("ray.io/cluster"))
      queue_.add(o["metadata"].value("namespace", "default") + "/" +
                 labels["ray.io/cluster"].get<std::string>());
  });
  for (int i = 0; i < workers_; ++i) threads_.emplace_back([this] { worker(); });
}

void RayClusterController::stop() {
  queue_.shutDown();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void RayClusterController::worker() {
  while (auto key = queue_.get()) {
    bool ok = false;
    try {
      ok = reconcile(*key);
    } catch (const std::exception& e) {
      spdlog::warn("RayCluster {}: {}", *key, e.what());
    }
    if (ok)
      queue_.forget(*key);
    else
      queue_.addRateLimited(*key);
    queue_.done(*key);
  }
}

bool RayClusterController::reconcile(const std::string& key) {
  auto slash = key.find('/');
  std::string ns = key.substr(0, slash), name = key.substr(slash + 1);
  auto cluster = kube_.get("RayCluster", ns, name);
  if (!cluster) return true;
  ClusterObserved o{*cluster, kube_.list("Pod", ns, {{"ray.io/cluster", name}}),
                    kube_.get("Service", ns, headServiceName(name)).has_value()};
  ClusterPlan plan = decideRayCluster(o);
  bool ok = true;
  for (const auto& [kind, object] : plan.creates) {
    try {
      kube_.create(kind, object);
      spdlog::info("RayCluster {}: created {} {}", key, kind, object["metadata"].value("name", ""));
    } catch (const kube::ApiError& e) {
      if (!e.alreadyExists()) {
        spdlog::warn("RayCluster {}: creating {} {} failed: {}", key, kind,
                     object["metadata"].value("name", ""), e.what());
        ok = false;
      }
    }
  }
  for (const auto& pod : plan.deletePods) {
    try {
      kube_.remove("Pod", ns, pod);
      spdlog::info("RayCluster {}: deleted surplus Pod {}", key, pod);
    } catch (const kube::ApiError& e) {
      if (!e.notFound()) ok = false;
    }
  }
  if (!plan.status.is_null()) {
    json next = *cluster;
    next["status"] = plan.status;
    try {
      kube_.updateStatus("RayCluster", next);
      spdlog::debug("RayCluster {}: status written: {}", key, plan.why);
    } catch (const kube::ApiError& e) {
      if (!e.conflict() && !e.notFound()) throw;
      ok = false;  // a newer version exists: decide again from it
    }
  }
  return ok;
}

}  // namespace rayjournal::controller
