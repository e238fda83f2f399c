#include "controller/EventNotes.h"

#include <map>

namespace rayjournal::controller {
namespace {

EventNote note(bool failed, const std::string& what, const char* verbed, const char* action,
               std::string message) {
  return {failed ? "Warning" : "Normal",
          failed ? std::string("FailedTo") + action + what : verbed + what, std::move(message),
          action};
}

std::string reasonNoun(const EventTarget& t) {
  if (t.kind == "Job") return t.subjectKind == "RayCluster" ? "RedisCleanupJob" : "RayJobSubmitter";
  if (t.kind == "Pod") return t.headPod ? "HeadPod" : "WorkerPod";
  if (t.kind == "PersistentVolumeClaim") return "PVC";
  return t.kind;
}

// The note of a create, as each KubeRay controller words it.
std::string createMessage(const EventTarget& t, const std::string& error) {
  const std::string key = t.ns + "/" + t.name;
  const bool failed = !error.empty();
  if (t.kind == "Job" && t.subjectKind == "RayCluster")  // the only Job a RayCluster makes
    return failed ? "Failed to create Redis cleanup Job " + key + ", " + error
                  : "Created Redis cleanup Job " + key;
  if (t.kind == "Job")
    return failed ? "Failed to create new Kubernetes Job " + key + ": " + error
                  : "Created Kubernetes Job " + key;
  if (t.kind == "Service" && t.subjectKind == "RayJob")
    return failed ? "Failed to create the service " + key + ", " + error
                  : "Created the service " + key;
  if (t.kind == "Service")
    return failed ? "Failed creating service " + key + ", " + error : "Created service " + key;
  if (t.kind == "Pod" && t.headPod)
    return failed ? "Failed to create head Pod " + key + ", " + error : "Created head Pod " + key;
  if (t.kind == "Pod")
    return failed ? "Failed to create worker Pod for the cluster " + t.ns + "/" + t.cluster +
                        ", " + error
                  : "Created worker Pod " + key;
  if (t.kind == "PersistentVolumeClaim")  // the embedded GCS store's (reconcileGCSStoragePVC)
    return failed ? "Failed to create GCS storage PVC " + key + ", " + error
                  : "Created GCS storage PVC " + key;
  // The autoscaler's RBAC (KubeRay's reconcileAutoscalerServiceAccount, ...Role, ...RoleBinding).
  static const std::map<std::string, std::string> rbacNouns{
      {"ServiceAccount", "service account"}, {"Role", "role"}, {"RoleBinding", "role binding"}};
  if (auto noun = rbacNouns.find(t.kind); noun != rbacNouns.end())
    return failed ? "Failed creating " + noun->second + " " + key + ", " + error
                  : "Created " + noun->second + " " + key;
  return failed ? "Failed to create " + t.kind + " " + key + ": " + error
                : "Created " + t.kind + " " + key;
}

std::string deleteMessage(const EventTarget& t, const std::string& error) {
  const std::string key = t.ns + "/" + t.name;
  const bool failed = !error.empty();
  if (t.kind == "RayCluster")
    return failed ? "Failed to delete cluster " + key + ": " + error : "Deleted cluster " + key;
  if (t.kind == "Job")
    return failed ? "Failed to delete submitter K8s Job " + key + ": " + error
                  : "Deleted submitter K8s Job " + key;
  const std::string pod = t.headPod ? "head Pod " : "worker Pod ";
  if (t.kind == "Pod")
    return failed ? "Failed deleting " + pod + key + ", " + error : "Deleted " + pod + key;
  return failed ? "Failed to delete " + t.kind + " " + key + ": " + error
                : "Deleted " + t.kind + " " + key;
}

}  // namespace

EventNote createNote(const EventTarget& t, const std::string& error) {
  return note(!error.empty(), reasonNoun(t), "Created", "Create", createMessage(t, error));
}

EventNote deleteNote(const EventTarget& t, const std::string& error) {
  return note(!error.empty(), reasonNoun(t), "Deleted", "Delete", deleteMessage(t, error));
}

EventNote serviceUpdateNote(const EventTarget& t, const std::string& error) {
  const std::string key = t.ns + "/" + t.name;
  return note(!error.empty(), "Service", "Updated", "Update",
              error.empty() ? "Updated the service " + key
                            : "Failed to update the service " + key + ", " + error);
}

EventNote workersSuspendedNote(const EventTarget& t, const std::string& error) {
  const std::string key = t.ns + "/" + t.name;
  return note(!error.empty(), "RayCluster", "Updated", "Update",
              error.empty()
                  ? "Set the `suspend` field to true for all worker groups in cluster " + key
                  : "Failed to suspend worker groups in cluster " + key + ": " + error);
}

std::string reportingController(const std::string& subjectKind) {
  return subjectKind == "RayJob" ? "rayjob-controller" : "raycluster-controller";
}

}  // namespace rayjournal::controller
