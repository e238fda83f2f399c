// The smallest valid RayJob document the decision tests start from (uid and generation set, as
// the API server would). Pure.
#pragma once

#include <nlohmann/json.hpp>

namespace rayjournal::testing {

using nlohmann::json;

inline json minimalRayJob() {
  return {{"apiVersion", "ray.io/v1"},
          {"kind", "RayJob"},
          {"metadata",
           {{"name", "job"}, {"namespace", "default"}, {"uid", "uid-1"}, {"generation", 1}}},
          {"spec",
           {{"entrypoint", "python x.py"},
            {"rayClusterSpec",
             {{"headGroupSpec",
               {{"template",
                 {{"spec",
                   {{"containers",
                     json::array({{{"name", "h"}, {"image", "rayproject/ray:2.46.0"}}})}}}}}}}}}}}};
}

}  // namespace rayjournal::testing
