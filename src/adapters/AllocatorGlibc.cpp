#include <malloc.h>

#include <cstdlib>

#include "adapters/Allocator.h"

namespace rayjournal::adapters {

void configureAllocator() {
  if (!std::getenv("MALLOC_ARENA_MAX")) mallopt(M_ARENA_MAX, 2);
}

std::string allocatorDescription() {
  return "glibc malloc";
}

}  // namespace rayjournal::adapters
