#include "adapters/TimeFormat.h"

#include <cstdio>
#include <ctime>

namespace rayjournal {

std::string toRfc3339(int64_t unixMs) {
  time_t seconds = static_cast<time_t>(unixMs / 1000);
  struct tm tm {};
  gmtime_r(&seconds, &tm);
  char buf[32];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string toRfc3339Micro(int64_t unixMs) {
  std::string seconds = toRfc3339(unixMs);
  char frac[16];
  std::snprintf(frac, sizeof(frac), ".%03d000Z", int(((unixMs % 1000) + 1000) % 1000));
  return seconds.substr(0, seconds.size() - 1) + frac;
}

std::optional<int64_t> parseRfc3339(const std::string& text) {
  struct tm tm {};
  int y, mo, d, h, mi, s;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &s) != 6)
    return std::nullopt;
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return static_cast<int64_t>(timegm(&tm)) * 1000;
}

std::optional<int64_t> parseDurationMs(const std::string& text) {
  double value = 0;
  char unit[8] = {0};
  if (std::sscanf(text.c_str(), "%lf%7s", &value, unit) < 1 || value < 0) return std::nullopt;
  std::string u(unit);
  if (u == "ms") return static_cast<int64_t>(value);
  if (u == "s" || u.empty()) return static_cast<int64_t>(value * 1000);
  if (u == "m") return static_cast<int64_t>(value * 60000);
  if (u == "h") return static_cast<int64_t>(value * 3600000);
  return std::nullopt;
}

std::string goDateTime(const std::string& rfc3339) {
  auto ms = parseRfc3339(rfc3339);
  if (!ms) return rfc3339;
  std::string canonical = toRfc3339(*ms);  // "2006-01-02T15:04:05Z"
  return canonical.substr(0, 10) + " " + canonical.substr(11, 8);
}

std::string goTimeString(const std::string& rfc3339) {
  auto ms = parseRfc3339(rfc3339);
  if (!ms) return rfc3339;
  return goDateTime(rfc3339) + " +0000 UTC";
}

}  // namespace rayjournal
