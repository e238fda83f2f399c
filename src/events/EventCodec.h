// The one place where record bodies (Events.h) become bytes and back. A body is a CBOR map with
// the keys EVENTS.md lists; a reader ignores keys it does not know, so adding a key is a
// compatible change. Decoding a body that is not what its record type promises throws
// wal::CorruptionError naming the record's seq. Pure functions.
#pragma once

#include <optional>
#include <string>

#include "events/Events.h"
#include "wal/Record.h"

namespace rayjournal::events {

std::string encode(const IntentBody& body);
std::string encode(const OutcomeBody& body);
std::string encode(const Observation& body);
std::string encode(const ControllerStarted& body);
std::string encode(const CheckpointBody& body);

IntentBody decodeIntent(const wal::Record& record);
OutcomeBody decodeOutcome(const wal::Record& record);
// nullopt: an observation kind this build does not know (a newer writer's); readers skip it.
std::optional<Observation> decodeObservation(const wal::Record& record);
ControllerStarted decodeControllerStarted(const wal::Record& record);
CheckpointBody decodeCheckpoint(const wal::Record& record);

// A WriteStatus intent's digest on its own (checkpoints keep the in-doubt ones); decodeStatus
// throws std::invalid_argument on bytes that are not a CBOR map.
std::string encodeStatus(const StatusDigest& status);
StatusDigest decodeStatus(const std::string& bytes);

}  // namespace rayjournal::events
