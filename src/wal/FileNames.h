// The small text rules the journal's files share: decimal numbers in meta values and in the
// HIGHWATER file, RocksDB's numbered file names (000017.sst, 000021.log), random instance ids.
// Pure except randomHex (std::random_device) and numberedFiles (lists a directory).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rayjournal::wal {

// A decimal uint64 without sign, spaces or more than 19 digits; nullopt otherwise.
std::optional<uint64_t> parseDecimal(std::string_view text);

// The number of a RocksDB file named <digits><extension>; nullopt for any other name.
std::optional<uint64_t> fileNumber(const std::filesystem::path& file, std::string_view extension);

// The files in dir named <digits><extension>, with their numbers, oldest (lowest) first.
// An unlistable directory gives what could be listed.
std::vector<std::pair<uint64_t, std::filesystem::path>> numberedFiles(const std::string& dir,
                                                                     std::string_view extension);

// `chars` random lowercase hex digits.
std::string randomHex(int chars);

}  // namespace rayjournal::wal
