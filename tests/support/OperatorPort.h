// Where the operator meets the simulated world in the scenario harness and the deterministic
// simulator (TigerBeetle's VOPR: the real code runs, only the world is simulated): the operator's
// Stack is given these clients instead of SimKube and SimRay themselves.
//   - Every write the operator makes (create, update, status write, delete; Ray submit and stop)
//     is reported to the observer *before* it reaches the world, so a checker can ask whether a
//     durable intent covers it. Events are notes about objects, not side effects on them.
//   - Watches go through a fan-out that detach() cuts, so a crashed Stack's callbacks never run
//     again while a new Stack subscribes to the same world.
// Single-threaded use (the stepped simulation). Header-only: tests and tools include it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "adapters/kube/KubeClient.h"
#include "adapters/ray/RayJobsClient.h"
#include "adapters/sim/SimKube.h"

namespace rayjournal::testing {

using nlohmann::json;

// verb: create update updateStatus remove submit stop; kind: the resource (or "Ray").
using WriteObserver = std::function<void(const std::string& verb, const std::string& kind,
                                         const std::string& ns, const std::string& name)>;

class OperatorKube : public kube::KubeClient {
 public:
  explicit OperatorKube(sim::SimKube& world) : world_(world) {}
  WriteObserver observer;

  // The next Stack starts from nothing: the previous one's watch callbacks are dropped.
  void detach() { subscribers_.clear(); }

  std::optional<json> get(const std::string& kind, const std::string& ns,
                          const std::string& name) override {
    return world_.get(kind, ns, name);
  }
  kube::Snapshot getSnapshot(const std::string& kind, const std::string& ns,
                             const std::string& name) override {
    return world_.getSnapshot(kind, ns, name);
  }
  std::vector<json> list(const std::string& kind, const std::string& ns,
                         const std::map<std::string, std::string>& labels = {}) override {
    return world_.list(kind, ns, labels);
  }
  std::vector<kube::Snapshot> listOwned(const std::string& kind, const std::string& ns,
                                        const std::string& ownerUid) override {
    return world_.listOwned(kind, ns, ownerUid);
  }
  std::string specManager(const std::string& kind, const std::string& ns,
                          const std::string& name) override {
    return world_.specManager(kind, ns, name);
  }
  kube::Snapshot create(const std::string& kind, json object) override {
    if (kind != "Event") report("create", kind, object);
    return world_.create(kind, std::move(object));
  }
  kube::Snapshot update(const std::string& kind, json object) override {
    report("update", kind, object);
    return world_.update(kind, std::move(object));
  }
  kube::Snapshot updateStatus(const std::string& kind, json object) override {
    report("updateStatus", kind, object);
    return world_.updateStatus(kind, std::move(object));
  }
  void remove(const std::string& kind, const std::string& ns, const std::string& name,
              kube::Propagation propagation = kube::Propagation::Background) override {
    if (observer) observer("remove", kind, ns, name);
    world_.remove(kind, ns, name, propagation);
  }
  void watch(const std::string& kind, kube::WatchCallback callback) override {
    watchSnapshots(kind, [callback = std::move(callback)](kube::WatchEventType type,
                                                          const kube::Snapshot& o) {
      callback(type, *o);
    });
  }
  void watchSnapshots(const std::string& kind, kube::SnapshotCallback callback) override {
    auto subscriber = std::make_shared<kube::SnapshotCallback>(std::move(callback));
    subscribers_[kind].push_back(subscriber);
    if (!registered_[kind]) {
      // The world's watch starts with Added for every object, delivered to the subscriber above.
      registered_[kind] = true;
      world_.watchSnapshots(kind, [this, kind](kube::WatchEventType type, const kube::Snapshot& o) {
        // Copied: a callback may subscribe or detach while the event is delivered.
        auto subscribers = subscribers_[kind];
        for (auto& s : subscribers) (*s)(type, o);
      });
      return;
    }
    for (auto& o : world_.list(kind, ""))
      (*subscriber)(kube::WatchEventType::Added, kube::snapshotOf(std::move(o)));
  }

 private:
  void report(const std::string& verb, const std::string& kind, const json& object) {
    if (!observer) return;
    const json& meta = object.contains("metadata") ? object["metadata"] : json::object();
    observer(verb, kind, meta.value("namespace", "default"), meta.value("name", ""));
  }

  sim::SimKube& world_;
  std::map<std::string, bool> registered_;
  std::map<std::string, std::vector<std::shared_ptr<kube::SnapshotCallback>>> subscribers_;
};

class OperatorRay : public ray::RayJobsClient {
 public:
  explicit OperatorRay(ray::RayJobsClient& world) : world_(world) {}
  WriteObserver observer;
  // Called after every job status the operator asks for (reads, not writes): the submission id
  // and whether Ray knew the job.
  std::function<void(const std::string& id, bool known)> onGet;

  std::optional<ray::JobInfo> getJob(const std::string& dashboard, const std::string& id) override {
    auto info = world_.getJob(dashboard, id);
    if (onGet) onGet(id, info.has_value());
    return info;
  }
  ray::SubmitResult submit(const std::string& dashboard,
                           const ray::SubmitRequest& request) override {
    if (observer) observer("submit", "Ray", "", request.submissionId);
    return world_.submit(dashboard, request);
  }
  bool stop(const std::string& dashboard, const std::string& id) override {
    if (observer) observer("stop", "Ray", "", id);
    return world_.stop(dashboard, id);
  }
  void useAuthToken(const std::string& dashboard, const std::string& token) override {
    world_.useAuthToken(dashboard, token);
  }

 private:
  ray::RayJobsClient& world_;
};

}  // namespace rayjournal::testing
