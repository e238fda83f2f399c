// Records as JSON for people and tools (rayjournal-replay, the status page, exports): the
// record's header fields plus its body as the generic map it is stored as. Never what is stored.
#pragma once

#include <nlohmann/json.hpp>

#include "wal/Record.h"

namespace rayjournal::events {

// The body as a JSON map; throws wal::CorruptionError when it is not valid CBOR.
nlohmann::json bodyToJson(const wal::Record& record);
nlohmann::json recordToJson(const wal::Record& record);
// The same around a body already decoded (bodyToJson): a reader that needs the body for more
// than the JSON decodes it once.
nlohmann::json recordToJson(const wal::Record& record, nlohmann::json body);
// recordToJson plus "text", the recordText line, from one decode of the body.
nlohmann::json recordToJsonWithText(const wal::Record& record);
// One record as one line of a timeline ("intend   CreatePod x  (why: ...)"), from its decoded body.
std::string recordText(const wal::Record& record, const nlohmann::json& body);

}  // namespace rayjournal::events
