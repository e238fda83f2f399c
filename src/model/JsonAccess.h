// Read-only access into API documents without copies: nlohmann's value(key, default) copies the
// member (a whole spec or status subtree), these return a reference to it, or to a shared empty
// value when it is absent or of another type.
// Thread-safe (the shared empty values are never modified).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rayjournal::model {

using nlohmann::json;

// The member whatever its type, else null.
const json& memberAt(const json& object, const char* key);
// The member when it is an object, else an empty object.
const json& objectAt(const json& object, const char* key);
// The member when it is an array, else an empty array.
const json& arrayAt(const json& object, const char* key);
// The member when it is a string, else an empty string.
const std::string& stringAt(const json& object, const char* key);

}  // namespace rayjournal::model
