// `rayjournal-replay timeline NS/NAME --html FILE`: one self-contained HTML page (no network
// fetches: the records are embedded as JSON, the drawing is inline script and CSS) with a time
// axis, one lane per attempt, operator restarts as bands, each intent as a bar from intent to
// outcome coloured by result (in doubt and resolved-after-restart marked), Ray and deployment
// status changes as markers, and a table of the records; hovering a bar shows its record,
// clicking it selects the record's row.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace rayjournal::replay {

// records: the object's records as events::recordToJson gives them, each with its "text" (the
// timeline's one-line description) added; title: "RayJob ns/name".
// lanes: "attempt" (one RayJob's page) or "object" (report: one lane per RayJob and RayCluster).
void writeTimelineHtml(const std::string& title, const nlohmann::json& records,
                       std::ostream& out, const std::string& lanes = "attempt");

}  // namespace rayjournal::replay
