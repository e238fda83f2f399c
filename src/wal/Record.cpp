#include "wal/Record.h"

#include <array>
#include <utility>

namespace rayjournal::wal {
namespace {
constexpr std::array<std::pair<RecordType, std::string_view>, 5> kNames{{
    {RecordType::ControllerStarted, "ControllerStarted"},
    {RecordType::Intent, "Intent"},
    {RecordType::Outcome, "Outcome"},
    {RecordType::Observation, "Observation"},
    {RecordType::Checkpoint, "Checkpoint"},
}};
}  // namespace

std::string_view recordTypeName(RecordType type) {
  for (const auto& [t, name] : kNames) {
    if (t == type) return name;
  }
  return "Unknown";
}

std::optional<RecordType> recordTypeFromName(std::string_view name) {
  for (const auto& [t, n] : kNames) {
    if (n == name) return t;
  }
  return std::nullopt;
}

bool isKnownRecordType(uint8_t raw) {
  return raw >= static_cast<uint8_t>(RecordType::ControllerStarted) &&
         raw <= static_cast<uint8_t>(RecordType::Checkpoint);
}

std::string ObjectRef::indexKey() const {
  return kind + "/" + ns + "/" + name;
}


}  // namespace rayjournal::wal
