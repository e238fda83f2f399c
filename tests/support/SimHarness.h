// A deterministic driver for scenario tests: simulated clock, simulated cluster, a journal on
// MemoryStorage, and the operator's real runtime::Stack in stepped mode (no threads): every
// step advances the simulated world, runs every key that is ready in the Stack's work queues
// (watch events, requeues and backoff decide which), and moves the clock. Every operator write
// is checked against the journal by the EffectChecker.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <stdexcept>

#include "events/JournalBodies.h"
#include "adapters/sim/SimWorld.h"
#include "controller/Executor.h"
#include "runtime/Stack.h"
#include "support/EffectChecker.h"
#include "support/OperatorPort.h"
#include "support/SampleRayJob.h"
#include "wal/MemoryStorage.h"

namespace rayjournal::testing {

using nlohmann::json;

class SimHarness {
 public:
  SimHarness()
      : kube(clock), ray(kube, clock), world(kube, ray, clock), port(kube), rayPort(ray) {
    port.observer = [this](const auto& verb, const auto& kind, const auto& ns, const auto& name) {
      checker.wrote(verb, kind, ns, name);
    };
    rayPort.observer = port.observer;
    restart();
  }
  ~SimHarness() {
    stack.reset();
    for (const auto& v : checker.violations()) ADD_FAILURE() << "EffectChecker: " << v;
  }

  // A controller restart: new journal handle on the same storage, a new Stack, projection
  // rebuilt, in-doubt intents resolved.
  controller::RecoveryReport restart() {
    stack.reset();
    port.detach();
    checker.crashed();
    journal.reset();
    wal::JournalOptions options;
    options.lazyFlushInterval = std::chrono::milliseconds(0);
    options.nowMs = [this] { return clock.nowMs(); };
    journal = wal::Journal::open(storage, events::journalOptions(options));
    runtime::StackOptions so;
    so.workers = 0;
    so.clusterWorkers = 0;
    so.decide = config;
    so.manageRayClusters = manageRayClusters;
    so.onJournaled = [this](const wal::Record& r) { checker.journaled(r); };
    so.onReconcile = onReconcile;
    stack = std::make_unique<runtime::Stack>(*journal, port, rayPort, clock, so);
    executor = &stack->executor();
    projection = &stack->projection();
    reconciler = &stack->rayJobReconciler();
    return stack->start();
  }

  void apply(const json& rayjob) { kube.create("RayJob", rayjob); }

  // Runs ready keys until none is left (bounded: a key that keeps itself ready is a bug the
  // bound turns into a failed wait instead of a hang).
  void drain() {
    for (int n = 0; stack->step();) {
      if (++n == 50000) {
        ADD_FAILURE() << "keys never settle (a reconcile keeps its key ready): "
                      << stack->busyReason();
        return;
      }
    }
  }

  void step(int64_t ms = 100, bool operatorUp = true) {
    world.advance();
    if (operatorUp) drain();
    clock.advance(ms);
    stack->wake();
  }

  bool runUntil(const std::function<bool()>& done, int64_t maxMs = 600000, int64_t stepMs = 100) {
    for (int64_t t = 0; t < maxMs; t += stepMs) {
      if (done()) return true;
      step(stepMs);
    }
    return done();
  }

  // A kill -9 of the operator the first time `action` reaches `stage` (its intent durable, or
  // executed before its outcome): steps until then (at most 400 steps) and leaves the operator
  // dead; restart() brings it back. Returns whether the crash happened.
  bool stepUntilCrash(controller::Executor::Stage stage, controller::Action action) {
    struct SimulatedCrash : std::runtime_error {
      SimulatedCrash() : std::runtime_error("simulated crash") {}
    };
    bool crashed = false;
    executor->hook = [&crashed, stage, action](controller::Executor::Stage at, const controller::Intent& i, uint64_t) {
      if (crashed || at != stage || i.action != action) return;
      crashed = true;
      throw SimulatedCrash();
    };
    for (int i = 0; i < 400 && !crashed; ++i) {
      try {
        step();
      } catch (const SimulatedCrash&) {
      }
    }
    executor->hook = nullptr;
    return crashed;
  }

  json rayjob(const std::string& name) {
    return kube.get("RayJob", "default", name).value_or(json());
  }
  json status(const std::string& name) { return rayjob(name).value("status", json::object()); }
  std::string deploymentStatus(const std::string& name) {
    return status(name).value("jobDeploymentStatus", "");
  }
  std::string clusterOf(const std::string& job) { return status(job).value("rayClusterName", ""); }
  // An Event in "default" with this reason whose note contains fragment.
  bool anyEvent(const std::string& reason, const std::string& fragment = "") {
    for (const auto& e : kube.list("Event", "default")) {
      if (e.value("reason", "") == reason && e.value("note", "").find(fragment) != std::string::npos)
        return true;
    }
    return false;
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
  OperatorKube port;
  OperatorRay rayPort;
  std::shared_ptr<wal::MemoryStorage> storage = std::make_shared<wal::MemoryStorage>();
  EffectChecker checker{storage};
  controller::DecideConfig config;
  bool manageRayClusters = true;
  std::function<void(const char*, double, const runtime::Result&)> onReconcile;  // metrics
  std::unique_ptr<wal::Journal> journal;
  std::unique_ptr<runtime::Stack> stack;
  controller::Executor* executor = nullptr;
  projection::JobProjection* projection = nullptr;
  runtime::Reconciler* reconciler = nullptr;
};

}  // namespace rayjournal::testing
