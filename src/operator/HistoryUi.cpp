#include "operator/HistoryUi.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "events/RecordJson.h"
#include "operator/HistoryPages.h"

namespace rayjournal::operator_ {
namespace {

using nlohmann::json;

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX and '+' decoded; a malformed escape is kept as it is.
std::string percentDecoded(std::string_view in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      out += ' ';
    } else if (in[i] == '%' && i + 2 < in.size() && hexDigit(in[i + 1]) >= 0 &&
               hexDigit(in[i + 2]) >= 0) {
      out += char(hexDigit(in[i + 1]) * 16 + hexDigit(in[i + 2]));
      i += 2;
    } else {
      out += in[i];
    }
  }
  return out;
}

std::string param(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    size_t eq = pair.find('=');
    if (pair.substr(0, eq) == key)
      return eq == std::string_view::npos ? "" : percentDecoded(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return "";
}

std::optional<uint64_t> number(const std::string& text) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoull(text);
}

HttpAnswer jsonAnswer(const json& body, int status = 200) {
  return {status, "application/json", body.dump()};
}

HttpAnswer problem(int status, const std::string& message) {
  return jsonAnswer({{"error", message}}, status);
}

HttpAnswer page(std::string html) { return {200, "text/html; charset=utf-8", std::move(html)}; }

// "NS/NAME" between prefix and suffix of a path, each percent-decoded; nullopt otherwise.
std::optional<std::pair<std::string, std::string>> nsAndName(const std::string& path,
                                                             const std::string& prefix,
                                                             const std::string& suffix) {
  if (path.size() <= prefix.size() + suffix.size() || path.rfind(prefix, 0) != 0 ||
      path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::nullopt;
  std::string rest = path.substr(prefix.size(), path.size() - prefix.size() - suffix.size());
  size_t slash = rest.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == rest.size() ||
      rest.find('/', slash + 1) != std::string::npos)
    return std::nullopt;
  return std::pair{percentDecoded(rest.substr(0, slash)), percentDecoded(rest.substr(slash + 1))};
}

}  // namespace

void HistoryUi::catchUp() {
  const uint64_t latest = journal_.refresh();
  if (index_.appliedThrough() >= latest) return;
  journal_.scan(index_.appliedThrough() + 1, [&](const wal::Record& r) {
    index_.apply(r);
    return r.seq < latest;
  });
}

HttpAnswer HistoryUi::runs(const std::string& query, bool pendingOnly) {
  catchUp();
  projection::RunFilter filter;
  filter.ns = param(query, "namespace");
  filter.status = param(query, "status");
  filter.reason = param(query, "reason");
  filter.deletedOnly = param(query, "deleted") == "true";
  std::string since = param(query, "since");
  if (!since.empty() && !(filter.sinceSeq = number(since)))
    return problem(400, "since must be a seq (a whole number), not \"" + since + "\"");
  filter.name = param(query, "name");
  filter.pendingOrFailed = pendingOnly;
  const std::string offsetText = param(query, "offset"), limitText = param(query, "limit");
  auto offset = offsetText.empty() ? std::optional<uint64_t>(0) : number(offsetText);
  auto limit = limitText.empty() ? std::optional<uint64_t>(kDefaultPage) : number(limitText);
  if (!offset || !limit || *limit == 0)
    return problem(400, "offset and limit must be whole numbers (limit at least 1)");
  size_t total = 0;
  json rows = json::array();
  index_.forEach(filter, [&](const projection::Run& run) {
    if (total++ >= *offset && rows.size() < std::min<uint64_t>(*limit, kMaxPage))
      rows.push_back(projection::runToJson(run));
  });
  return jsonAnswer({{"latestSeq", journal_.latestSeq()},
                     {"total", total},
                     {"offset", *offset},
                     {"runs", std::move(rows)}});
}

HttpAnswer HistoryUi::records(const std::string& kind, const std::string& ns,
                              const std::string& name, const std::string& query) {
  journal_.refresh();
  const std::string afterText = param(query, "after"), limitText = param(query, "limit");
  auto after = afterText.empty() ? std::optional<uint64_t>(0) : number(afterText);
  auto limit = limitText.empty() ? std::optional<uint64_t>(kDefaultPage) : number(limitText);
  if (!after || !limit || *limit == 0)
    return problem(400, "after and limit must be whole numbers (limit at least 1)");
  const size_t page = std::min<uint64_t>(*limit, kMaxPage);
  json out = json::array();
  bool more = false;
  journal_.scanObject({kind, ns, name, ""}, *after + 1, [&](const wal::Record& r) {
    if (out.size() == page) return !(more = true);
    json j = events::recordToJsonWithText(r);
    out.push_back(std::move(j));
    return true;
  });
  const uint64_t last = out.empty() ? *after : out.back()["seq"].get<uint64_t>();
  return jsonAnswer({{"latestSeq", journal_.latestSeq()},
                     {"records", std::move(out)},
                     {"more", more},
                     {"nextAfter", last}});
}

HttpAnswer HistoryUi::answer(const std::string& target) {
  const size_t mark = target.find('?');
  const std::string path = target.substr(0, mark);
  const std::string query = mark == std::string::npos ? "" : target.substr(mark + 1);
  if (path == "/" || path == "/index.html") return page(listPage());
  if (path == "/pending") return page(pendingPage());
  if (path == "/api/v1/rayjobs") return runs(query, false);
  if (path == "/api/v1/pending") return runs(query, true);
  for (const auto& [plural, kind] : {std::pair{"rayjobs", "RayJob"}, {"rayclusters", "RayCluster"}}) {
    const std::string pagePrefix = "/" + std::string(plural) + "/";
    const std::string api = "/api/v1/" + std::string(plural) + "/", suffix = "/records";
    if (nsAndName(path, pagePrefix, "")) return page(rayJobPage());
    if (auto object = nsAndName(path, api, suffix))
      return records(kind, object->first, object->second, query);
  }
  return {404, "text/plain; charset=utf-8",
          "not found; the pages are /, /pending, /rayjobs/NAMESPACE/NAME and "
          "/rayclusters/NAMESPACE/NAME; the API is under "
          "/api/v1 (docs/history-ui.md)\n"};
}

}  // namespace rayjournal::operator_
