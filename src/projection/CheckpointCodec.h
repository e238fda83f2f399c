// Binary encoding of the projection for checkpoints (format "RJP5"; "RJP4", "RJP3", without
// replica failures, and "RJP2", without the RayCluster section, are still read; documented in
// src/wal/FORMAT.md). Deterministic: the same state gives the same bytes.
// RJP5 prefixes each state with its length and an in-doubt flag, so a restart splits the
// checkpoint into its states without decoding them (splitCheckpoint: no allocation per state)
// and decodes a state when it is first asked for (decodeState). At 100,000 RayJobs the eager
// decode was over half of a restart, and the decoded states take about 5x their bytes.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "projection/JobProjection.h"

namespace rayjournal::projection {

std::string encodeCheckpoint(const ProjectionStates& states, uint64_t appliedThrough);
// The decoded states and the untouched encoded ones (not taken; a key in at most one of the two)
// in one checkpoint, the untouched ones copied as they are.
std::string encodeCheckpoint(const std::map<std::string, JobState>& jobs,
                             const std::map<std::string, JobState>& clusters,
                             const EncodedStates& untouched, uint64_t appliedThrough);
// RJP4, the layout before RJP5 (every reader still accepts it): for compatibility tests.
std::string encodeCheckpointV4(const ProjectionStates& states, uint64_t appliedThrough);

// Every state decoded. Throws std::invalid_argument on truncated or foreign bytes.
void decodeCheckpoint(const std::string& bytes, ProjectionStates& states,
                      uint64_t& appliedThrough);
// RJP5 split into its states (appended to `states`); false, and nothing read, for an older
// format. Throws std::invalid_argument on a truncated checkpoint or keys out of order.
bool splitCheckpoint(std::string_view bytes, EncodedStates& states, uint64_t& appliedThrough);
// Throws std::invalid_argument naming the state's key when its bytes do not decode.
JobState decodeState(const EncodedState& state);
bool isBinaryCheckpoint(const std::string& bytes);
// A binary checkpoint of an older format as this version writes the same state (verify compares
// a stored checkpoint with the replayed one byte for byte); "" when it does not decode.
std::string inCurrentFormat(const std::string& bytes);

}  // namespace rayjournal::projection
