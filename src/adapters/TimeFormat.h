// RFC 3339 timestamps as Kubernetes writes them, and short durations ("2s", "500ms", "1m").
// Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rayjournal {

std::string toRfc3339(int64_t unixMs);       // "2026-11-30T04:03:18Z" (second precision)
std::string toRfc3339Micro(int64_t unixMs);  // "2026-11-30T04:03:18.123000Z" (MicroTime)
std::optional<int64_t> parseRfc3339(const std::string& text);  // Unix ms; nullopt if malformed
std::optional<int64_t> parseDurationMs(const std::string& text);

// Go's renderings of a UTC time, as KubeRay's status messages print them (alerting rules match
// them): time.DateTime, and time.Time's String() (what %v prints for metav1.Time). A text that
// is not RFC 3339 is returned as it is.
std::string goDateTime(const std::string& rfc3339);    // "2006-01-02 15:04:05"
std::string goTimeString(const std::string& rfc3339);  // "2006-01-02 15:04:05 +0000 UTC"

}  // namespace rayjournal
