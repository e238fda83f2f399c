// KubeRay v1.7.0's in-tree autoscaling on the Pods this operator builds (common/pod.go:
// DefaultHeadPodTemplate, BuildAutoscalerContainer, mergeAutoscalerOverrides, BuildPod's shared
// log volume; utils.GetHeadGroupServiceAccountName). With spec.enableInTreeAutoscaling the head's
// `ray start` gets --no-monitor (the Ray autoscaler runs beside it instead), the head Pod gets the
// `autoscaler` sidecar, the ServiceAccount the cluster's Role is bound to, and a `ray-logs`
// emptyDir at /tmp/ray shared by Ray and the sidecar. autoscalerOptions.version v2 adds
// RAY_enable_autoscaler_v2=true to the head's Ray container and restartPolicy Never to every Pod;
// v1 the variable "false". For the builders' .cpp files only: this header includes the JSON
// library, which the decision must not see. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rayjournal::controller {

struct RayClusterView;

// The ServiceAccount the head Pod runs as under autoscaling: the head template's
// serviceAccountName, else the cluster's name, cut as KubeRay's CheckName cuts it (the last 50
// characters; a leading digit or punctuation becomes 'r').
std::string autoscalerServiceAccountName(const nlohmann::json& cluster);
// The name of the cluster's Role and RoleBinding for the autoscaler: its own name, cut the same way.
std::string autoscalerRoleName(const nlohmann::json& cluster);
// The sidecar as KubeRay builds it (the Ray container's image, IfNotPresent, the cluster, namespace
// and head Pod name from the downward API, KUBERAY_CRD_VER=v1, 500m/512Mi requests and limits,
// `ray kuberay-autoscaler ...` under bash -c, or -cl for a login shell), with token auth when
// the cluster has it, then autoscalerOptions merged: resources, image, imagePullPolicy,
// securityContext, command and args replace; env, envFrom and volumeMounts append.
nlohmann::json autoscalerContainer(const RayClusterView& cluster, const nlohmann::json& rayContainer);
// Everything autoscaling adds to a Pod spec once its Ray container (containers[0]) is built:
// head: ServiceAccount, sidecar, ray-logs volume, v2/v1 env; both: restartPolicy Never under v2.
// Does nothing when the cluster does not autoscale.
void addAutoscaling(const RayClusterView& cluster, bool head, nlohmann::json& podSpec);

}  // namespace rayjournal::controller
