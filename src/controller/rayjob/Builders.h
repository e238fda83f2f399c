// What the RayJob state machine asks the builders (Children.cpp) for, in types that need no JSON:
// the objects to create or write come back as ApiObjects, built from the user's templates (a Pod
// template carries fields nobody models, so the builders work on documents). Pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "controller/rayjob/RayJob.h"
#include "model/Document.h"

namespace rayjournal::controller {

// "<name>-<5 chars>" from KubeRay's alphabet, derived from (uid, incarnation, salt): the same
// inputs give the same name, so a decision re-derived after a crash picks the same identity.
std::string generatedName(const RayJob& job, uint32_t incarnation, const std::string& salt);

// How the operator's settings shape a submitter: KubeRay's ENABLE_LOGIN_SHELL, and the
// SidecarSubmitterRestart gate (the sidecar restarts on failure and checks before it submits).
struct SubmitterShell {
  bool loginShell = false;
  bool sidecarRestarts = false;
};
model::ApiObject rayClusterFor(const RayJob& job, const std::string& clusterName,
                               const SubmitterShell& shell);
// The K8sJobMode submitter for the job with status (identities, dashboard) as decided.
model::ApiObject submitterJobFor(const RayJob& job, const model::Document& cluster,
                                 bool loginShell);
model::ApiObject jobHeadServiceFor(const RayJob& job, const model::Document& clusterHeadService,
                                   const std::string& clusterName);
// The RayJob head Service pointed at another cluster (a retry's).
model::ApiObject withClusterSelector(const model::Document& jobHeadService,
                                     const std::string& clusterName);
// The cluster with every worker group suspended (the DeleteWorkers policy).
model::ApiObject withWorkersSuspended(const model::Document& cluster);
// Opt-in per-attempt keys for a job's own writes (docs/exactly-once.md): with this annotation
// "true", the submission's metadata carries the attempt number (status.failed + 1) under
// kAttemptMetadataKey, beside the submission id Ray adds itself. Off by default, so a
// KubeRay-compatible submission carries nothing of the operator's unless asked.
inline constexpr const char* kAttemptMetadataAnnotation =
    "rayjournal.io/attempt-in-submission-metadata";
inline constexpr const char* kAttemptMetadataKey = "rayjournal.io/attempt";
bool attemptInSubmissionMetadata(const RayJob& job);
// spec.metadata, plus the attempt when the annotation asks for it.
std::map<std::string, std::string> submissionMetadata(const RayJob& job,
                                                      const RayJobStatus& status);
// The Ray submission of the attempt that status describes (its jobId and dashboard);
// throws std::invalid_argument when runtimeEnvYAML is not YAML.
model::ApiObject submitRequestFor(const RayJob& job, const RayJobStatus& status);
model::ApiObject stopRequestFor(const std::string& dashboard);

}  // namespace rayjournal::controller
