#include "model/Syntax.h"

#include <charconv>

namespace rayjournal::model {
namespace {

bool lowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool alnum(char c) { return lowerAlnum(c) || (c >= 'A' && c <= 'Z'); }
bool digit(char c) { return c >= '0' && c <= '9'; }

// first char, then any of `inner`, ending in `last` (a one-char string is its own first and last).
template <typename First, typename Inner, typename Last>
bool shaped(std::string_view s, First first, Inner inner, Last last) {
  if (s.empty() || !first(s.front()) || !last(s.back())) return false;
  for (size_t i = 1; i + 1 < s.size(); ++i)
    if (!inner(s[i])) return false;
  return true;
}

}  // namespace

bool isDns1035Label(std::string_view s) {
  return shaped(
      s, [](char c) { return c >= 'a' && c <= 'z'; },
      [](char c) { return lowerAlnum(c) || c == '-'; }, lowerAlnum);
}

bool isDns1123Label(std::string_view s) {
  return shaped(s, lowerAlnum, [](char c) { return lowerAlnum(c) || c == '-'; }, lowerAlnum);
}

bool isDns1123Subdomain(std::string_view s) {
  for (;;) {
    size_t dot = s.find('.');
    if (!isDns1123Label(s.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

bool isQualifiedNamePart(std::string_view s) {
  return shaped(
      s, alnum, [](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; }, alnum);
}

bool isLabelValue(std::string_view s) { return s.empty() || isQualifiedNamePart(s); }

std::optional<int64_t> digitsAfter(std::string_view text, std::string_view flag) {
  for (size_t at = text.find(flag); at != std::string_view::npos; at = text.find(flag, at + 1)) {
    size_t start = at + flag.size(), end = start;
    while (end < text.size() && digit(text[end])) ++end;
    if (end == start) continue;
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(text.data() + start, text.data() + end, value);
    if (ec != std::errc()) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

}  // namespace rayjournal::model
