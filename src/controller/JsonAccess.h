// The decision code reads documents through model/JsonAccess (no copies); these names let it do
// so unqualified.
#pragma once

#include "model/JsonAccess.h"

namespace rayjournal::controller {

using nlohmann::json;
using model::arrayAt;
using model::memberAt;
using model::objectAt;
using model::stringAt;

}  // namespace rayjournal::controller
