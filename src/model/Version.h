// Release versions compared as apimachinery's version.ParseGeneric reads them: an optional "v",
// then major.minor and an optional .patch ("v2.52" == "2.52.0"); anything after (a "-gke.1"
// build, a "+abc" suffix) is ignored. One parser for Ray's rayVersion and the API server's
// gitVersion. Pure.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace rayjournal::model {

using Version = std::array<int, 3>;  // major, minor, patch

// nullopt when the text does not start with "major.minor".
std::optional<Version> parseVersion(std::string_view text);
// False when the text is not a version.
bool versionAtLeast(std::string_view text, int major, int minor, int patch = 0);

}  // namespace rayjournal::model
