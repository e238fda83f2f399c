#include <jemalloc/jemalloc.h>

#include "adapters/Allocator.h"

// Read by jemalloc when it initialises, before main; MALLOC_CONF overrides any of it.
// - narenas:2: two cores serve the workers, watches and posters (jemalloc's default is 4 per core,
//   each holding its own free pages);
// - background_thread, dirty_decay_ms:1000, muzzy_decay_ms:0: freed pages go back to the kernel
//   within a second, from jemalloc's own thread rather than on a worker's allocation.
extern "C" {
const char* malloc_conf = "narenas:2,background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0";
}

namespace rayjournal::adapters {

void configureAllocator() {}

std::string allocatorDescription() {
  const char* version = "unknown";
  size_t size = sizeof(version);
  mallctl("version", &version, &size, nullptr, 0);
  unsigned arenas = 0;
  size = sizeof(arenas);
  mallctl("opt.narenas", &arenas, &size, nullptr, 0);
  return std::string("jemalloc ") + version + " (" + std::to_string(arenas) + " arenas)";
}

}  // namespace rayjournal::adapters
