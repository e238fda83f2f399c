// The seq ranges a salvage found missing, kept in meta `lost_ranges` as "a-b,c-d" (FORMAT.md).
// The journal's sequence is gap-free except inside these ranges: a reader skips them instead of
// reporting a gap, and `rayjournal-replay verify` lists them. Value type; not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rayjournal::wal {

class LostRanges {
 public:
  // Throws JournalError naming the text when it is not "a-b,c-d" with a <= b.
  static LostRanges parse(const std::string& text);
  std::string toString() const;  // "" when empty

  void add(uint64_t from, uint64_t to);  // inclusive; merges overlapping and adjacent ranges
  void add(const LostRanges& other);
  LostRanges minus(const LostRanges& other) const;
  // True when every seq in [from, to] is lost (an empty range, from > to, is covered).
  bool covers(uint64_t from, uint64_t to) const;
  bool contains(uint64_t seq) const { return covers(seq, seq); }
  // True when some lost seq lies strictly between `after` and `before`.
  bool anyBetween(uint64_t after, uint64_t before) const {
    for (const auto& [a, b] : ranges_)
      if (b > after && a < before) return true;
    return false;
  }
  uint64_t lastLost() const { return ranges_.empty() ? 0 : ranges_.back().second; }
  uint64_t count() const;  // seqs lost
  bool empty() const { return ranges_.empty(); }
  const std::vector<std::pair<uint64_t, uint64_t>>& ranges() const { return ranges_; }

 private:
  std::vector<std::pair<uint64_t, uint64_t>> ranges_;  // sorted, disjoint, not adjacent
};

}  // namespace rayjournal::wal
