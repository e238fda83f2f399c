// The finalizer each controller keeps on its own objects: a RayJob's (its children are cleaned
// up before it goes) and a GCS fault-tolerant RayCluster's (its Redis storage namespace is
// emptied before it goes). AddFinalizer/RemoveFinalizer intents act on the subject's.
#pragma once

#include <string_view>

#include "controller/raycluster/GcsFaultTolerance.h"
#include "controller/rayjob/RayJob.h"

namespace rayjournal::controller {

inline const char* finalizerOf(std::string_view subjectKind) {
  return subjectKind == "RayCluster" ? kRedisCleanupFinalizer : kFinalizer;
}

}  // namespace rayjournal::controller
