// The environment variables KubeRay's operator reads and its users set in their Deployments,
// applied to the decision's settings with KubeRay's parsing rules (an unparsable value falls back
// to KubeRay's default, as there).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "controller/Plan.h"

namespace rayjournal::operator_ {

using EnvLookup = std::function<const char*(const char*)>;  // std::getenv in the operator

// Reads RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS, RAYJOB_DEPLOYMENT_STATUS_TRANSITION_GRACE_PERIOD_
// SECONDS, CLUSTER_DOMAIN, DELETE_RAYJOB_CR_AFTER_JOB_FINISHES, ENABLE_LOGIN_SHELL,
// ENABLE_PROBES_INJECTION, ENABLE_INIT_CONTAINER_INJECTION and ENABLE_RANDOM_POD_DELETE into `decide`. Returns one line
// per variable that was set, for the start-up log.
std::vector<std::string> applyKubeRayEnvironment(controller::DecideConfig& decide,
                                                 const EnvLookup& env);

}  // namespace rayjournal::operator_
