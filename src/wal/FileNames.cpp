#include "wal/FileNames.h"

#include <algorithm>
#include <random>

namespace rayjournal::wal {

std::optional<uint64_t> parseDecimal(std::string_view text) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != text.npos)
    return std::nullopt;
  return std::stoull(std::string(text));
}

std::optional<uint64_t> fileNumber(const std::filesystem::path& file, std::string_view extension) {
  if (file.extension() != extension) return std::nullopt;
  return parseDecimal(file.stem().string());
}

std::vector<std::pair<uint64_t, std::filesystem::path>> numberedFiles(const std::string& dir,
                                                                     std::string_view extension) {
  std::vector<std::pair<uint64_t, std::filesystem::path>> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (auto number = fileNumber(entry.path(), extension)) out.emplace_back(*number, entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string randomHex(int chars) {
  std::random_device rd;
  std::string out;
  for (int i = 0; i < chars; ++i) out.push_back("0123456789abcdef"[rd() % 16]);
  return out;
}

}  // namespace rayjournal::wal
