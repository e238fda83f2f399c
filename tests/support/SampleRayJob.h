// A minimal valid RayJob manifest for the simulated cluster (tests and benchmarks): one head
// container, the simulated Ray's result and duration as annotations. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rayjournal::testing {

using nlohmann::json;

inline json sampleRayJob(const std::string& name, const std::string& mode = "K8sJobMode",
                         const std::string& result = "SUCCEEDED",
                         const std::string& duration = "2s") {
  return json{
      {"apiVersion", "ray.io/v1"},
      {"kind", "RayJob"},
      {"metadata",
       {{"name", name},
        {"namespace", "default"},
        {"annotations",
         {{"rayjournal.io/sim-duration", duration}, {"rayjournal.io/sim-result", result}}}}},
      {"spec",
       {{"entrypoint", "python -c 'print(1)'"},
        {"submissionMode", mode},
        {"rayClusterSpec",
         {{"headGroupSpec",
           {{"template",
             {{"spec",
               {{"containers", json::array({{{"name", "ray-head"},
                                             {"image", "rayproject/ray:2.46.0"}}})}}}}}}}}}}}};
}

// The job with one worker group "small" of one replica (min = max = 1).
inline json withWorkerGroup(json job, const std::string& group = "small") {
  job["spec"]["rayClusterSpec"]["workerGroupSpecs"] = json::array(
      {{{"groupName", group},
        {"replicas", 1},
        {"minReplicas", 1},
        {"maxReplicas", 1},
        {"template",
         {{"spec",
           {{"containers", json::array({{{"name", "ray-worker"},
                                         {"image", "rayproject/ray:2.46.0"}}})}}}}}}});
  return job;
}

}  // namespace rayjournal::testing
