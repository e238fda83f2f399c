// A deterministic driver for scenario tests: simulated clock, simulated cluster, a journal on
// MemoryStorage, and the real Reconciler, stepped by hand (no threads): every step advances
// the simulated world, reconciles every RayJob once, and moves the clock.
#pragma once

#include <functional>
#include <memory>

#include "adapters/sim/SimWorld.h"
#include "controller/Reconciler.h"
#include "controller/Recovery.h"
#include "support/SampleRayJob.h"
#include "wal/MemoryStorage.h"

namespace rayjournal::testing {

using nlohmann::json;

class SimHarness {
 public:
  SimHarness() : kube(clock), ray(kube, clock), world(kube, ray, clock) { restart(); }

  // A controller restart: new journal handle on the same storage, projection rebuilt.
  controller::RecoveryReport restart() {
    reconciler.reset();
    executor.reset();
    journal.reset();
    projection = std::make_unique<projection::JobProjection>();
    wal::JournalOptions options;
    options.lazyFlushInterval = std::chrono::milliseconds(0);
    options.nowMs = [this] { return clock.nowMs(); };
    journal = wal::Journal::open(storage, options);
    executor = std::make_unique<controller::Executor>(*journal, kube, ray, clock);
    reconciler = std::make_unique<controller::Reconciler>(kube, ray, *executor, *projection,
                                                          *journal, clock, config);
    return controller::recover(*journal, *projection, kube, ray);
  }

  void apply(const json& rayjob) { kube.create("RayJob", rayjob); }

  void step(int64_t ms = 100, bool operatorUp = true) {
    world.advance();
    if (operatorUp) {
      for (const auto& doc : kube.list("RayJob", "")) {
        reconciler->reconcile(doc["metadata"]["namespace"].get<std::string>() + "/" +
                              doc["metadata"]["name"].get<std::string>());
      }
    }
    clock.advance(ms);
  }

  bool runUntil(const std::function<bool()>& done, int64_t maxMs = 600000, int64_t stepMs = 100) {
    for (int64_t t = 0; t < maxMs; t += stepMs) {
      if (done()) return true;
      step(stepMs);
    }
    return done();
  }

  json rayjob(const std::string& name) {
    return kube.get("RayJob", "default", name).value_or(json());
  }
  std::string deploymentStatus(const std::string& name) {
    return rayjob(name).value("status", json::object()).value("jobDeploymentStatus", "");
  }

  std::vector<wal::Record> records() {
    std::vector<wal::Record> out;
    journal->scan(0, [&](const wal::Record& r) {
      out.push_back(r);
      return true;
    });
    return out;
  }

  ManualClock clock;
  sim::SimKube kube;
  sim::SimRay ray;
  sim::SimWorld world;
  std::shared_ptr<wal::MemoryStorage> storage = std::make_shared<wal::MemoryStorage>();
  controller::DecideConfig config;
  std::unique_ptr<wal::Journal> journal;
  std::unique_ptr<projection::JobProjection> projection;
  std::unique_ptr<controller::Executor> executor;
  std::unique_ptr<controller::Reconciler> reconciler;
};

}  // namespace rayjournal::testing
