// Decorators that count the operator's own API and Ray calls by verb (the simulated world's
// actors use the undecorated clients, so they are not counted). Thread-safe.
#pragma once

#include <atomic>
#include <map>
#include <mutex>

#include "adapters/kube/KubeClient.h"
#include "adapters/ray/RayJobsClient.h"

namespace rayjournal::bench {

class CallCounter {
 public:
  void add(const std::string& what) {
    std::lock_guard lock(mu_);
    counts_[what]++;
  }
  std::map<std::string, uint64_t> counts() const {
    std::lock_guard lock(mu_);
    return counts_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, uint64_t> counts_;
};

class CountingKubeClient : public kube::KubeClient {
 public:
  CountingKubeClient(kube::KubeClient& inner, CallCounter& counter)
      : inner_(inner), counter_(counter) {}
  std::optional<kube::json> get(const std::string& kind, const std::string& ns,
                                const std::string& name) override {
    counter_.add("get " + kind);
    return inner_.get(kind, ns, name);
  }
  std::vector<kube::json> list(const std::string& kind, const std::string& ns,
                               const std::map<std::string, std::string>& labels) override {
    counter_.add("list " + kind);
    return inner_.list(kind, ns, labels);
  }
  kube::json create(const std::string& kind, const kube::json& object) override {
    counter_.add("create " + kind);
    return inner_.create(kind, object);
  }
  kube::json update(const std::string& kind, const kube::json& object) override {
    counter_.add("update " + kind);
    return inner_.update(kind, object);
  }
  kube::json updateStatus(const std::string& kind, const kube::json& object) override {
    counter_.add("updateStatus " + kind);
    return inner_.updateStatus(kind, object);
  }
  void remove(const std::string& kind, const std::string& ns, const std::string& name,
              kube::Propagation p) override {
    counter_.add("delete " + kind);
    inner_.remove(kind, ns, name, p);
  }
  void watch(const std::string& kind, kube::WatchCallback callback) override {
    inner_.watch(kind, std::move(callback));
  }

 private:
  kube::KubeClient& inner_;
  CallCounter& counter_;
};

class CountingRayClient : public ray::RayJobsClient {
 public:
  CountingRayClient(ray::RayJobsClient& inner, CallCounter& counter)
      : inner_(inner), counter_(counter) {}
  std::optional<ray::JobInfo> getJob(const std::string& d, const std::string& id) override {
    counter_.add("ray get");
    return inner_.getJob(d, id);
  }
  ray::SubmitResult submit(const std::string& d, const ray::SubmitRequest& r) override {
    counter_.add("ray submit");
    return inner_.submit(d, r);
  }
  bool stop(const std::string& d, const std::string& id) override {
    counter_.add("ray stop");
    return inner_.stop(d, id);
  }

 private:
  ray::RayJobsClient& inner_;
  CallCounter& counter_;
};

}  // namespace rayjournal::bench
