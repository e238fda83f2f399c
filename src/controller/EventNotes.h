// The Kubernetes Events the Executor posts after a side effect, with KubeRay v1.7.0's reasons,
// actions and note texts (rayjob_controller.go, raycluster_controller.go), so that users'
// `kubectl get events` filters and alerts keep matching. Pure functions.
#pragma once

#include <string>

#include "controller/Plan.h"

namespace rayjournal::controller {

// What was acted on: its kind ("RayCluster", "Job", "Service", "Pod"), namespace and name; for
// a Pod whether it is the head, and the RayCluster it belongs to.
struct EventTarget {
  std::string subjectKind;  // RayJob or RayCluster: whose Event it is
  std::string kind;
  std::string ns, name;
  bool headPod = false;
  std::string cluster{};  // a Pod's RayCluster
};

// error empty: the effect landed (Normal); else the API server's error (Warning).
EventNote createNote(const EventTarget& t, const std::string& error = "");
EventNote deleteNote(const EventTarget& t, const std::string& error = "");
// The RayJob head Service pointed at another cluster.
EventNote serviceUpdateNote(const EventTarget& t, const std::string& error = "");
// Every worker group of the RayCluster suspended (the DeleteWorkers policy).
EventNote workersSuspendedNote(const EventTarget& t, const std::string& error = "");

// The reportingController of a controller's Events: KubeRay's recorder names.
std::string reportingController(const std::string& subjectKind);

}  // namespace rayjournal::controller
