// How many malloc arenas the process uses. glibc gives every thread that allocates an arena of
// its own (up to 8 per core) and keeps what each thread frees in that thread's arena, so the
// process holds more than its heap when a dozen threads (workers, watches, Event posters, the
// journal's writer) allocate: at 2,000 RayJobs on the real API server, a 121 MB heap (heaptrack)
// had a peak RSS of 198 MiB with glibc's 16 arenas and 183 MiB with 2 (BENCHMARKS.md, "Where
// the memory goes"). Two arenas serve two cores.
#pragma once

#include <malloc.h>

#include <cstdlib>

namespace rayjournal::adapters {

// Call first thing in main, before any thread starts. MALLOC_ARENA_MAX in the environment, when
// set, still decides (glibc reads it itself).
inline void limitMallocArenas(int arenas = 2) {
  if (!std::getenv("MALLOC_ARENA_MAX")) mallopt(M_ARENA_MAX, arenas);
}

}  // namespace rayjournal::adapters
