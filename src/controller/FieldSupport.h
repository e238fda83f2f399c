// Every field of KubeRay v1.7.0's RayJob and RayCluster specs (deploy/crds), and what rayjournal
// does with it: implemented, read by Ray itself from the object, or not implemented (then the
// object's user is told, once per object and field: a FieldIgnored observation, a Warning Event
// FieldNotImplemented, a metric). A test walks the CRD schemas and fails on a field in neither
// table, so a field a future CRD adds cannot be ignored in silence. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace rayjournal::controller {

enum class Support {
  Implemented,  // rayjournal acts on it as KubeRay does
  ReadByRay,    // KubeRay does not act on it either: Ray (its autoscaler) reads it from the object
  Ignored,      // not implemented: the user is warned
};

struct FieldRule {
  std::string_view path;  // below the spec, "." between keys, "[]" after an array's key
  Support support;
  std::string_view instead;  // Ignored: what rayjournal does instead
};

// The rules of a RayCluster's spec, and of a RayJob's (whose rayClusterSpec follows the first).
const std::vector<FieldRule>& rayClusterSpecRules();
const std::vector<FieldRule>& rayJobSpecRules();
// The rule that covers a spec path (the longest rule path it starts with); nullptr when none.
const FieldRule* ruleFor(std::string_view kind, std::string_view specPath);

struct IgnoredField {
  std::string path;  // from the object's root: "spec.networkPolicy"
  std::string instead;
};
// The Ignored fields the object (a RayJob or RayCluster document) sets: present and not empty,
// false or zero. At most one entry per rule.
std::vector<IgnoredField> ignoredFieldsOf(std::string_view kind, const nlohmann::json& object);

}  // namespace rayjournal::controller
