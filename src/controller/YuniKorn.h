// YuniKorn as KubeRay v1.7.0 integrates it (batchscheduler/yunikorn): no object of its own, only
// fields on what the operator creates. Every Ray Pod (and a RayJob's K8sJobMode RayCluster and
// submitter Pod template) gets schedulerName "yunikorn" and the parent's
// yunikorn.apache.org/app-id and yunikorn.apache.org/queue labels as applicationId and queue;
// with ray.io/gang-scheduling-enabled on the parent, also the task groups
// (yunikorn.apache.org/task-groups: the parent's own annotation, else computed: the head, each
// worker group at minReplicas x numOfHosts, and a RayJob's submitter) and the child's task group
// name. Pure functions.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "model/Document.h"

namespace rayjournal::controller {

// The task groups KubeRay computes for a RayCluster or a RayJob, as the annotation's JSON text.
std::string yuniKornTaskGroups(const nlohmann::json& parent);
// AddMetadataToChildResource; podLike: the child is a Pod or a Pod template (schedulerName).
void addYuniKornMetadata(const nlohmann::json& parent, nlohmann::json& child, const std::string& taskGroup,
                         bool podLike);
// The same for the decisions, on the documents they carry.
void joinYuniKorn(const model::Document& parent, model::ApiObject& child, const std::string& taskGroup,
                  bool podLike);
void joinYuniKornAsSubmitter(const model::Document& parent, model::ApiObject& job);

}  // namespace rayjournal::controller
