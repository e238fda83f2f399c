// Volcano's gang scheduling as KubeRay v1.7.0 builds it (batchscheduler/volcano): one PodGroup
// "ray-<name>-pg" per standalone RayCluster or per RayJob (its RayCluster's Pods and its
// submitter join the RayJob's), minMember and minResources covering the whole gang, and on every
// Pod the PodGroup's name, its task group, the queue and priority labels and schedulerName
// "volcano". The PodGroup is created before the first Pod (a journaled intent), updated when the
// gang changes, and shrunk to what is left when a RayJob finishes or is suspended. Pure
// functions on documents; the reconcilers read the PodGroup and execute the intents.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "controller/raycluster/ClusterResources.h"
#include "model/Document.h"

namespace rayjournal::controller {

inline constexpr const char* kVolcanoQueueLabel = "volcano.sh/queue-name";
inline constexpr const char* kVolcanoGroupNameAnnotation = "scheduling.k8s.io/group-name";
inline constexpr const char* kVolcanoTaskSpecAnnotation = "volcano.sh/task-spec";

// minMember and minResources of a PodGroup.
struct Gang {
  int64_t minMember = 0;
  Resources minResources;
};

// "ray-<name>-pg"; for a RayCluster a RayJob made, the RayJob's (ray.io/originated-from-cr-name).
std::string volcanoPodGroupName(const nlohmann::json& owner);
// A RayCluster's gang: head + desired workers, or head + minReplicas when it autoscales.
Gang clusterGang(const nlohmann::json& clusterSpec);
// A RayJob's: its cluster's, plus the submitter's resources in K8sJobMode and SidecarMode.
Gang rayJobGang(const nlohmann::json& rayJob);
// What a finished or suspended RayJob keeps (CleanupOnCompletion): its cluster's gang while the
// cluster exists and is not being deleted, else nothing.
Gang leftoverGang(const nlohmann::json* cluster);

// The PodGroup (scheduling.volcano.sh/v1beta1) for `owner` (kind RayCluster or RayJob):
// controlled by it, its annotations, queue and priorityClassName from its labels, network
// topology from volcano.sh/network-topology-*. Null, with `error` saying why, when it cannot be
// built (a malformed label).
model::ApiObject volcanoPodGroupFor(const nlohmann::json& owner, const Gang& gang, std::string& error);
// The PodGroup with the gang's minMember and minResources, or null when it has them already
// (resources compared by value, as quotav1.Equals).
nlohmann::json podGroupWithGang(const nlohmann::json& podGroup, const Gang& gang);

// AddMetadataToChildResource: the parent's queue and priority-class labels, the PodGroup and
// task group annotations, and schedulerName "volcano" when the child is a Pod or a Pod template.
void addVolcanoMetadata(const nlohmann::json& parent, nlohmann::json& child, const std::string& taskGroup,
                        bool podLike);

// The same for the decisions, on the documents they carry (no JSON in the caller).
std::string volcanoPodGroupNameOf(const model::Document& owner);
Gang rayJobGangOf(const model::Document& rayJob);
Gang leftoverGangOf(const model::Document* cluster);
// The PodGroup to create for `owner` (null, with `error` set, when it cannot be built).
model::ApiObject podGroupCreateFor(const model::Document& owner, const Gang& gang, std::string& error);
// The PodGroup with the gang, or null when it has it already.
model::ApiObject podGroupUpdateFor(const model::Document& podGroup, const Gang& gang);
// addVolcanoMetadata on an object being created (a RayCluster: podLike false), or on a batch
// Job's Pod template (the K8sJobMode submitter, task group "submittergroup").
void joinVolcanoGang(const model::Document& parent, model::ApiObject& child, const std::string& taskGroup,
                     bool podLike);
void joinVolcanoGangAsSubmitter(const model::Document& parent, model::ApiObject& job);

}  // namespace rayjournal::controller
