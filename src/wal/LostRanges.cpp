#include "wal/LostRanges.h"

#include <algorithm>
#include <sstream>

#include "wal/FileNames.h"
#include "wal/JournalError.h"

namespace rayjournal::wal {
namespace {

uint64_t number(const std::string& text, const std::string& whole) {
  auto value = parseDecimal(text);
  if (!value) throw JournalError("lost_ranges '" + whole + "' is malformed at '" + text + "'");
  return *value;
}

}  // namespace

LostRanges LostRanges::parse(const std::string& text) {
  LostRanges out;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    auto dash = part.find('-');
    if (dash == std::string::npos) throw JournalError("lost_ranges '" + text + "' is malformed");
    uint64_t from = number(part.substr(0, dash), text), to = number(part.substr(dash + 1), text);
    if (from == 0 || from > to) throw JournalError("lost_ranges '" + text + "' is malformed");
    out.add(from, to);
  }
  return out;
}

std::string LostRanges::toString() const {
  std::string out;
  for (const auto& [from, to] : ranges_) {
    if (!out.empty()) out += ",";
    out += std::to_string(from) + "-" + std::to_string(to);
  }
  return out;
}

void LostRanges::add(uint64_t from, uint64_t to) {
  if (from > to) return;
  ranges_.emplace_back(from, to);
  std::sort(ranges_.begin(), ranges_.end());
  std::vector<std::pair<uint64_t, uint64_t>> merged;
  for (const auto& r : ranges_) {
    if (!merged.empty() && r.first <= merged.back().second + 1)
      merged.back().second = std::max(merged.back().second, r.second);
    else
      merged.push_back(r);
  }
  ranges_ = std::move(merged);
}

void LostRanges::add(const LostRanges& other) {
  for (const auto& [from, to] : other.ranges_) add(from, to);
}

LostRanges LostRanges::minus(const LostRanges& other) const {
  LostRanges out;
  for (auto [from, to] : ranges_) {
    for (const auto& [oFrom, oTo] : other.ranges_) {
      if (oTo < from || oFrom > to) continue;
      if (oFrom > from) out.add(from, oFrom - 1);
      from = oTo + 1;
      if (oTo >= to) break;
    }
    if (from <= to) out.add(from, to);
  }
  return out;
}

bool LostRanges::covers(uint64_t from, uint64_t to) const {
  if (from > to) return true;
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), std::pair{from, UINT64_MAX});
  if (it == ranges_.begin()) return false;
  --it;
  return it->first <= from && to <= it->second;
}

uint64_t LostRanges::count() const {
  uint64_t n = 0;
  for (const auto& [from, to] : ranges_) n += to - from + 1;
  return n;
}

}  // namespace rayjournal::wal
