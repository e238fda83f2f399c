// Binary encoding of the projection for checkpoints (format "RJP4"; "RJP3", without replica
// failures, and "RJP2", without the RayCluster section, are still read; documented in
// src/wal/FORMAT.md). Several times faster to load than a JSON/CBOR document, which is what
// bounds restart time with many live RayJobs. Deterministic: the same state gives the same bytes.
#pragma once

#include <map>
#include <string>

#include "projection/JobProjection.h"

namespace rayjournal::projection {

std::string encodeCheckpoint(const ProjectionStates& states, uint64_t appliedThrough);
// Throws std::invalid_argument on truncated or foreign bytes.
void decodeCheckpoint(const std::string& bytes, ProjectionStates& states,
                      uint64_t& appliedThrough);
bool isBinaryCheckpoint(const std::string& bytes);

}  // namespace rayjournal::projection
