// Decorators that count the operator's own Kubernetes API and Ray calls by verb, kind and
// outcome (HTTP code, or "error"/"ok" for Ray), for /metrics and the benchmarks. Only what
// passes through the decorated client is counted (a simulated world's own actors use the
// undecorated clients). Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "adapters/kube/KubeClient.h"
#include "adapters/ray/RayJobsClient.h"

namespace rayjournal {

class CallCounter {
 public:
  // verb: "get", "create", ..., "ray submit"; kind: "RayJob", ... ("" for Ray); outcome: "200",
  // "404", "0" (unreachable), "ok", "error".
  void add(const std::string& verb, const std::string& kind, const std::string& outcome);
  // "verb kind" -> calls, whatever the outcome.
  std::map<std::string, uint64_t> counts() const;
  std::map<std::tuple<std::string, std::string, std::string>, uint64_t> byOutcome() const;

 private:
  mutable std::mutex mu_;
  std::map<std::tuple<std::string, std::string, std::string>, uint64_t> counts_;
};

class CountingKubeClient : public kube::KubeClient {
 public:
  CountingKubeClient(kube::KubeClient& inner, CallCounter& counter)
      : inner_(inner), counter_(counter) {}
  std::optional<kube::json> get(const std::string& kind, const std::string& ns,
                                const std::string& name) override;
  kube::Snapshot getSnapshot(const std::string& kind, const std::string& ns,
                             const std::string& name) override;
  std::optional<kube::json> getLive(const std::string& kind, const std::string& ns,
                                    const std::string& name) override;
  std::vector<kube::json> list(const std::string& kind, const std::string& ns,
                               const std::map<std::string, std::string>& labels) override;
  kube::Snapshot create(const std::string& kind, kube::json object) override;
  Encoded createEncoded(const std::string& kind, kube::json object) override;
  void post(const std::string& kind, kube::json object) override;
  std::vector<std::optional<kube::ApiError>> postAll(const std::string& kind,
                                                     std::vector<kube::json> objects) override;
  kube::Snapshot update(const std::string& kind, kube::json object) override;
  kube::Snapshot updateStatus(const std::string& kind, kube::json object) override;
  Encoded updateEncoded(const std::string& kind, kube::json object) override;
  Encoded updateStatusEncoded(const std::string& kind, const kube::json& object) override;
  void remove(const std::string& kind, const std::string& ns, const std::string& name,
              kube::Propagation p) override;
  void watch(const std::string& kind, kube::WatchCallback callback) override {
    inner_.watch(kind, std::move(callback));
  }
  void watchSnapshots(const std::string& kind, kube::SnapshotCallback callback) override {
    inner_.watchSnapshots(kind, std::move(callback));
  }
  void watchPacked(const std::string& kind, kube::PackedCallback callback) override {
    inner_.watchPacked(kind, std::move(callback));
  }
  bool watchesSynced() const override { return inner_.watchesSynced(); }
  std::string specManager(const std::string& kind, const std::string& ns,
                          const std::string& name) override;

 private:
  template <class F>
  auto counted(const char* verb, const std::string& kind, const char* okCode, F&& call);
  template <class F>
  auto countedRead(const std::string& kind, F&& call);
  kube::KubeClient& inner_;
  CallCounter& counter_;
};

class CountingRayClient : public ray::RayJobsClient {
 public:
  CountingRayClient(ray::RayJobsClient& inner, CallCounter& counter)
      : inner_(inner), counter_(counter) {}
  std::optional<ray::JobInfo> getJob(const std::string& d, const std::string& id) override;
  ray::SubmitResult submit(const std::string& d, const ray::SubmitRequest& r) override;
  bool stop(const std::string& d, const std::string& id) override;
  void useAuthToken(const std::string& d, const std::string& token) override {
    inner_.useAuthToken(d, token);
  }

 private:
  template <class F>
  auto counted(const char* verb, F&& call);
  ray::RayJobsClient& inner_;
  CallCounter& counter_;
};

}  // namespace rayjournal
