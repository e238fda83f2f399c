#include "model/Version.h"

#include <charconv>

namespace rayjournal::model {
namespace {

// One decimal number at `at`, advancing it; nullopt when there is none.
std::optional<int> number(std::string_view text, size_t& at) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data() + at, text.data() + text.size(), value);
  if (ec != std::errc()) return std::nullopt;
  at = size_t(end - text.data());
  return value;
}

}  // namespace

std::optional<Version> parseVersion(std::string_view text) {
  size_t at = !text.empty() && text[0] == 'v';
  Version v{0, 0, 0};
  auto major = number(text, at);
  if (!major || at >= text.size() || text[at] != '.') return std::nullopt;
  auto minor = number(text, ++at);
  if (!minor) return std::nullopt;
  v[0] = *major;
  v[1] = *minor;
  if (at < text.size() && text[at] == '.') {
    if (auto patch = number(text, ++at)) v[2] = *patch;
  }
  return v;
}

bool versionAtLeast(std::string_view text, int major, int minor, int patch) {
  auto v = parseVersion(text);
  return v && *v >= Version{major, minor, patch};
}

}  // namespace rayjournal::model
