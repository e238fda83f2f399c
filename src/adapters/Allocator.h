// The process's malloc. The operator and the bench link jemalloc (Debian libjemalloc) unless
// built with a sanitizer, which brings its own allocator; both fall back to glibc's malloc with
// CMake -DRAYJOURNAL_JEMALLOC=OFF.
//
// Why: the operator's CPU and memory are mostly parsed Kubernetes objects, a few KB of JSON
// becoming thousands of small nodes (BENCHMARKS.md, "Where the memory goes"). On the real API
// server at 2,000 RayJobs, back to back on one commit, glibc with 2 arenas took 15.4 ms of CPU
// per RayJob and peaked at 175 MiB; jemalloc with the settings in AllocatorJemalloc.cpp took
// 12.3 ms and 158 MiB (BENCHMARKS.md, "The allocator").
#pragma once

#include <string>

namespace rayjournal::adapters {

// Call first thing in main, before any thread starts. With glibc: at most 2 malloc arenas
// (glibc gives every allocating thread one, up to 8 per core, and keeps what a thread frees in
// its arena); MALLOC_ARENA_MAX in the environment still decides. With jemalloc its settings are
// compiled in (MALLOC_CONF in the environment still overrides them), and this does nothing.
void configureAllocator();

// For the startup log: "jemalloc 5.3.0-… (2 arenas)" or "glibc malloc".
std::string allocatorDescription();

}  // namespace rayjournal::adapters
