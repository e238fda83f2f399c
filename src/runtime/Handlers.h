// Watch event -> reconcile key, in one place (controller-runtime's handler package): an object
// maps to its own key, to the key of its controlling owner of a kind, or to the key named by a
// label. Pure functions on the watched document; empty when the object maps to nothing.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rayjournal::runtime {

// "namespace/name" of the object itself.
std::string keyOfObject(const nlohmann::json& object);
// "namespace/name" of the owner of ownerKind that is the object's controller.
std::string keyOfControllerOwner(const nlohmann::json& object, const std::string& ownerKind);
// "namespace/<label value>" when the object carries the label.
std::string keyOfLabel(const nlohmann::json& object, const std::string& label);

}  // namespace rayjournal::runtime
