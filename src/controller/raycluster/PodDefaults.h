// What KubeRay's configuration file (`--config`, kind Configuration) adds to every Ray Pod the
// operator builds: sidecar containers, environment variables of the Ray container, and labels
// and annotations. Set once at start-up; shared, never changed, by every reconcile.
#pragma once

#include <map>
#include <string>

#include "model/Document.h"

namespace rayjournal::controller {

struct PodDefaults {
  // Containers appended to every head (worker) Pod, after the Ray container and the autoscaler's
  // sidecar, as KubeRay appends them. JSON arrays, or null.
  model::Document headSidecars;
  model::Document workerSidecars;
  // EnvVars given to the Ray container unless it names them itself (JSON array, or null).
  model::Document containerEnvs;
  // Added to every Ray Pod unless the Pod already carries the key (the user's and KubeRay's own
  // take precedence).
  std::map<std::string, std::string, std::less<>> labels;
  std::map<std::string, std::string, std::less<>> annotations;

  bool empty() const {
    return headSidecars.isNull() && workerSidecars.isNull() && containerEnvs.isNull() &&
           labels.empty() && annotations.empty();
  }
};

}  // namespace rayjournal::controller
