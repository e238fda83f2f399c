// `rayjournal-bench cache-size`: what the informer cache holds per object of each kind, kept as a
// parsed document (nlohmann) or packed (CBOR of the same object), and what a packed read costs.
// The objects come from a recorded watch stream (bench/data/watch-stream.jsonl: what
// kube-apiserver sent during KubeRay's e2e suite), with managedFields dropped as the operator
// drops them and Pods slimmed as the cache keeps them (controller/raycluster/CachedPod).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rayjournal::bench {

struct CacheSizeOptions {
  std::vector<std::string> streams;  // files of watch events, one per line
  int repeat = 20;                   // passes over the objects when timing reads (best kept)
};

nlohmann::json runCacheSize(const CacheSizeOptions& options);

// The bytes a parsed document asks the allocator for (before size-class rounding): every value's
// 16 bytes, each object's map and its members' tree nodes, each array's buffer, each string
// longer than the 15 characters std::string keeps inline. Deterministic, unlike the heap stats
// of a process that allocates other things meanwhile.
size_t documentBytes(const nlohmann::json& document);

}  // namespace rayjournal::bench
