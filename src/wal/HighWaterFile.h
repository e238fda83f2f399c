// <journal dir>/HIGHWATER: the newest seq the journal acknowledged as durable, one line
// "acknowledged_through <seq>". It lives outside RocksDB so that a lost or truncated write-ahead
// log is noticed (FORMAT.md, "Lost acknowledged records"). Replaced atomically: written to
// HIGHWATER.tmp, fsynced, renamed over, and the directory fsynced. Blocking; not thread-safe
// for one directory (the journal's flusher is its only writer).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rayjournal::wal {

inline constexpr const char* kHighWaterFile = "HIGHWATER";

// nullopt when the file does not exist. Throws CorruptionError naming the file when it does
// but cannot be read as written.
std::optional<uint64_t> readHighWaterFile(const std::string& dir);
// Throws JournalError naming the file and the cause (ENOSPC as "disk full").
void writeHighWaterFile(const std::string& dir, uint64_t seq);
// fsyncs a directory, making renames and creations inside it durable (salvage uses it too).
void syncDirectory(const std::string& dir);

}  // namespace rayjournal::wal
