// Every deterministic name the operator gives to an object it creates, in one place (as
// LevelDB's filename.h holds every file name). A name fixed before the create and journaled with
// its intent is what makes a create idempotent: a lost response never yields a second object.
// Pure functions; no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rayjournal::model {

// KubeRay's name of the submitter container (the K8sJobMode Job's, the SidecarMode head's).
inline constexpr const char* kSubmitterContainer = "ray-job-submitter";

// The head Pod of a RayCluster: "<cluster>-head" (W14: one name, so never a second head).
std::string headPodName(std::string_view cluster);
// The head Service of a RayCluster: the user's headGroupSpec.headService.metadata.name when
// set (KubeRay honours it), otherwise "<cluster>-head-svc".
std::string headServiceName(std::string_view cluster, std::string_view userOverride = {});
// Worker Pod i of a group: "<cluster>-<group>-worker-<i>".
std::string workerPodName(std::string_view cluster, std::string_view group, uint64_t index);
// The common prefix of a group's worker Pod names.
std::string workerPodPrefix(std::string_view cluster, std::string_view group);
// The index of a worker Pod of that group, or nullopt when the name is not one of ours (a Pod a
// user made by hand, or a number that does not fit): such a Pod is foreign and left alone.
std::optional<uint64_t> workerPodIndex(std::string_view podName, std::string_view cluster,
                                       std::string_view group);
// The same with the group's workerPodPrefix computed once (a pass reads every Pod's name).
std::optional<uint64_t> workerIndexAfterPrefix(std::string_view podName, std::string_view prefix);
// The group and index of a worker Pod name of that cluster, when it is one of ours. The index is
// the digits after the last "-worker-", so a group whose name holds "-worker-" is still found.
struct WorkerName {
  std::string group;
  uint64_t index = 0;
};
std::optional<WorkerName> workerNameParts(std::string_view podName, std::string_view cluster);
// The RayJob-level head Service: "<rayjob>-head-svc" (KubeRay's job head Service).
std::string rayJobHeadServiceName(std::string_view rayJob);
// The K8sJobMode submitter Job: named after the RayJob, as in KubeRay.
std::string submitterJobName(std::string_view rayJob);
// The in-cluster address of a head Service's dashboard port.
std::string serviceAddress(std::string_view service, std::string_view ns,
                           std::string_view clusterDomain, int port);

}  // namespace rayjournal::model
