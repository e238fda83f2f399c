// A RayCluster made directly in namespace default, as the Stack tests create them: a head and
// one worker group "small" of `workers` replicas (min 0, max 5), both running Ray 2.60; `spec`
// entries are merged over it (gcsFaultToleranceOptions, suspend, ...). Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rayjournal::testing {

inline nlohmann::json minimalRayCluster(const std::string& name, const nlohmann::json& spec = nlohmann::json::object(),
                                        int workers = 1) {
  using nlohmann::json;
  json pod = {{"spec", {{"containers", json::array({{{"name", "ray"}, {"image", "rayproject/ray:2.60.0"}}})}}}};
  json cluster = {
      {"apiVersion", "ray.io/v1"},
      {"kind", "RayCluster"},
      {"metadata", {{"name", name}, {"namespace", "default"}}},
      {"spec",
       {{"headGroupSpec", {{"rayStartParams", json::object()}, {"template", pod}}},
        {"workerGroupSpecs", json::array({{{"groupName", "small"}, {"replicas", workers}, {"minReplicas", 0},
                                           {"maxReplicas", 5}, {"rayStartParams", json::object()},
                                           {"template", pod}}})}}}};
  cluster["spec"].update(spec);
  return cluster;
}

}  // namespace rayjournal::testing
