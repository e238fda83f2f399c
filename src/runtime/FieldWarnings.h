// Tells the user of a RayJob or RayCluster which KubeRay fields it sets that rayjournal does not
// implement (controller/FieldSupport): once per object and field, a FieldIgnored observation
// journaled with the object's next decision (the projection remembers it across restarts) and a
// Warning Event FieldNotImplemented; and a count per kind and field for /metrics. Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "controller/Executor.h"
#include "controller/Plan.h"
#include "projection/JobProjection.h"

namespace rayjournal::runtime {

class FieldWarnings {
 public:
  explicit FieldWarnings(const projection::JobProjection& projection) : projection_(projection) {}

  // The fields of the subject (kind, key, uid, its document in raw) not warned about yet; each
  // is counted and remembered here until the projection has it.
  std::vector<events::FieldIgnored> fresh(const controller::Subject& subject);
  // Warnings given by this process, by {kind, field path}.
  std::map<std::pair<std::string, std::string>, uint64_t> counts() const;

 private:
  const projection::JobProjection& projection_;
  mutable std::mutex mu_;
  std::set<std::string> pending_;  // "uid path" given but perhaps not journaled yet
  std::map<std::pair<std::string, std::string>, uint64_t> counts_;
};

// The Event for one field: Warning FieldNotImplemented, naming the path and what is done instead.
controller::EventNote fieldNotImplementedNote(const events::FieldIgnored& field);

}  // namespace rayjournal::runtime
