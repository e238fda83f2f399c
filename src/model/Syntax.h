// Kubernetes name and label syntax, as apimachinery's validation checks it, without std::regex:
// libstdc++ compiles a regex through the shared ctype<char> facet, whose lazily filled narrow
// cache two threads race on when each compiles its first regex (a ThreadSanitizer report in the
// operator: RayJob validation on a worker thread against the simulated autoscaler's parsing on
// the world thread). These checks read only their argument. Pure functions; no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace rayjournal::model {

// [a-z]([-a-z0-9]*[a-z0-9])? : an RFC 1035 label (a RayJob's name). No length check.
bool isDns1035Label(std::string_view s);
// [a-z0-9]([-a-z0-9]*[a-z0-9])? : an RFC 1123 label (a namespace's name). No length check.
bool isDns1123Label(std::string_view s);
// RFC 1123 labels joined by '.' (a label key's prefix). No length check.
bool isDns1123Subdomain(std::string_view s);
// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] : the name part of a qualified name. No length check.
bool isQualifiedNamePart(std::string_view s);
// Empty, or a qualified name part: a label value. No length check.
bool isLabelValue(std::string_view s);

// The digits right after the first "<flag>" in text that has some ("--num-cpus=8" gives 8), as
// std::regex_search("<flag>([0-9]+)") would find them; nullopt when none has digits or the
// number does not fit in an int64.
std::optional<int64_t> digitsAfter(std::string_view text, std::string_view flag);

}  // namespace rayjournal::model
