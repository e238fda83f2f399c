// Ray token authentication of a RayCluster (spec.authOptions.mode: token), as KubeRay v1.7.0
// wires it: the token lives in a Secret under key auth_token, named after the cluster unless
// authOptions.secretName names the user's own; Ray containers and submitters read it through
// RAY_AUTH_MODE=token and RAY_AUTH_TOKEN, and the operator's dashboard calls carry it in
// x-ray-authorization. Pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rayjournal::model {

inline constexpr const char* kAuthTokenKey = "auth_token";

// KubeRay's utils.CheckName: at most 50 characters (cut from the front), and a first character
// that is a digit or punctuation becomes 'r'.
std::string checkName(std::string name);
// The Secret holding the cluster's token; "" when token auth is off (or is Kubernetes-token
// auth, which needs no Secret).
std::string tokenAuthSecretName(const nlohmann::json& clusterSpec, const std::string& cluster);
// True when the operator creates that Secret (no authOptions.secretName of the user's).
bool operatorCreatesTokenSecret(const nlohmann::json& clusterSpec);
// RAY_AUTH_MODE=token and RAY_AUTH_TOKEN from the Secret on a container, each unless present.
void addTokenAuthEnv(nlohmann::json& container, const std::string& secretName);
// The token a Secret document holds (data, base64, as the API server returns it; or the
// stringData it was written with); "" when it has none.
std::string tokenOfSecret(const nlohmann::json& secret);

}  // namespace rayjournal::model
