#include "model/Quantity.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace rayjournal::model {
namespace {

// The suffixes apimachinery accepts: binary (Ki..Ei), decimal SI (n..E), or none.
std::optional<long double> suffixScale(std::string_view suffix) {
  struct Entry {
    std::string_view name;
    long double scale;
  };
  static constexpr Entry kSuffixes[] = {
      {"", 1.0L},          {"n", 1e-9L},
      {"u", 1e-6L},        {"m", 1e-3L},
      {"k", 1e3L},         {"M", 1e6L},
      {"G", 1e9L},         {"T", 1e12L},
      {"P", 1e15L},        {"E", 1e18L},
      {"Ki", 1024.0L},     {"Mi", 1048576.0L},
      {"Gi", 1073741824.0L}, {"Ti", 1099511627776.0L},
      {"Pi", 1125899906842624.0L}, {"Ei", 1152921504606846976.0L}};
  for (const auto& e : kSuffixes)
    if (e.name == suffix) return e.scale;
  return std::nullopt;
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// The length of the number at the front of text: sign, digits, optional fraction.
size_t numberLength(std::string_view text) {
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  size_t digits = 0;
  while (i < text.size() && isDigit(text[i])) ++i, ++digits;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && isDigit(text[i])) ++i, ++digits;
  }
  return digits == 0 ? 0 : i;
}

// A decimal exponent ("e3", "E-2") directly after the number, as a length; 0 when none.
size_t exponentLength(std::string_view rest) {
  if (rest.size() < 2 || (rest[0] != 'e' && rest[0] != 'E')) return 0;
  size_t i = 1;
  if (rest[i] == '+' || rest[i] == '-') ++i;
  size_t start = i;
  while (i < rest.size() && isDigit(rest[i])) ++i;
  return i == start ? 0 : i;
}

}  // namespace

int64_t Quantity::ceilValue() const {
  long double up = std::ceil(value);
  if (up >= static_cast<long double>(std::numeric_limits<int64_t>::max()))
    return std::numeric_limits<int64_t>::max();
  if (up <= static_cast<long double>(std::numeric_limits<int64_t>::min()))
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(up);
}

std::optional<Quantity> parseQuantity(std::string_view text) {
  size_t n = numberLength(text);
  if (n == 0 || text.size() > 64) return std::nullopt;
  std::string number(text.substr(0, n));
  std::string_view rest = text.substr(n);
  long double scale = 1.0L;
  Quantity q;
  if (size_t e = exponentLength(rest); e > 0) {
    scale = std::pow(10.0L, std::strtold(std::string(rest.substr(1, e - 1)).c_str(), nullptr));
    rest = rest.substr(e);
  } else {
    auto s = suffixScale(rest);
    if (!s) return std::nullopt;
    scale = *s;
    q.binary = rest.size() == 2 && rest[1] == 'i';
    rest = {};
  }
  if (!rest.empty()) return std::nullopt;
  q.value = std::strtold(number.c_str(), nullptr) * scale;
  if (!std::isfinite(q.value)) return std::nullopt;
  return q;
}

std::string formatQuantity(const Quantity& q) {
  constexpr long double kMax = static_cast<long double>(std::numeric_limits<int64_t>::max());
  long double v = std::min(std::fabs(q.value), kMax);
  std::string sign = q.value < 0 ? "-" : "";
  if (v == 0) return "0";
  auto whole = [](long double x) { return x == std::floor(x); };
  if (q.binary && whole(v)) {
    static constexpr const char* kBinary[] = {"Ei", "Pi", "Ti", "Gi", "Mi", "Ki"};
    for (int i = 0; i < 6; ++i) {
      long double unit = std::pow(1024.0L, 6 - i);
      if (v >= unit && whole(v / unit))
        return sign + std::to_string(static_cast<int64_t>(v / unit)) + kBinary[i];
    }
    return sign + std::to_string(static_cast<int64_t>(v));
  }
  static constexpr const char* kDecimal[] = {"E", "P", "T", "G", "M", "k", "", "m", "u", "n"};
  for (int i = 0; i < 10; ++i) {
    long double unit = std::pow(10.0L, 18 - 3 * i);
    long double scaled = v / unit;
    if (scaled >= 1 && whole(std::round(scaled * 1e6L) / 1e6L))
      return sign + std::to_string(static_cast<int64_t>(std::llround(scaled))) + kDecimal[i];
  }
  return sign + std::to_string(static_cast<int64_t>(std::ceil(v * 1e9L))) + "n";
}

}  // namespace rayjournal::model
