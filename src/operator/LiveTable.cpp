#include "operator/LiveTable.h"

#include <algorithm>
#include <array>

#include "adapters/TimeFormat.h"

namespace rayjournal::operator_ {
namespace {

using nlohmann::json;

std::string text(const json& doc, const char* field, const char* fallback = "") {
  const json& v = doc.contains(field) ? doc[field] : json();
  return v.is_string() ? v.get<std::string>() : v.is_null() ? fallback : v.dump();
}

std::string ageOf(int64_t ms) {
  int64_t s = std::max<int64_t>(0, ms / 1000);
  if (s < 120) return std::to_string(s) + "s";
  if (s < 7200) return std::to_string(s / 60) + "m";
  return std::to_string(s / 3600) + "h";
}

constexpr std::array<const char*, 8> kHeaders{"NAMESPACE/NAME", "MODE", "ATTEMPT",
                                              "DEPLOYMENT STATUS", "RAY STATUS", "RAYCLUSTER",
                                              "AGE", "REASON"};
// Which columns go first when the terminal is narrow (indices into kHeaders).
constexpr std::array<size_t, 5> kDropOrder{5, 6, 1, 7, 2};

std::array<std::string, 8> cells(const LiveRow& r) {
  return {r.name, r.mode, r.attempt, r.deployment, r.ray, r.cluster, r.age, r.reason};
}

std::string paint(const std::string& status, const std::string& cell, bool colour) {
  if (!colour) return cell;
  if (status == "Complete") return "\x1b[32m" + cell + "\x1b[0m";
  if (status == "Failed" || status == "ValidationFailed") return "\x1b[31m" + cell + "\x1b[0m";
  return cell;
}

std::string footerLine(const LiveFooter& f) {
  int total = 0;
  std::string counts;
  for (const auto& [status, n] : f.byStatus) {
    total += n;
    counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + (status.empty() ? "New" : status);
  }
  char elapsed[32];
  std::snprintf(elapsed, sizeof(elapsed), "%.1f s", f.elapsedSeconds);
  return std::to_string(total) + " RayJobs: " + counts + "  |  journal " +
         std::to_string(f.records) + " records, " + std::to_string(f.syncs) + " syncs  |  " +
         elapsed;
}

}  // namespace

LiveRow liveRowOf(const json& rayjob, int64_t nowMs) {
  const json& meta = rayjob.value("metadata", json::object());
  const json& spec = rayjob.value("spec", json::object());
  const json& st = rayjob.value("status", json::object());
  auto created = parseRfc3339(text(meta, "creationTimestamp"));
  int failed = st.value("failed", 0);
  std::string deployment = text(st, "jobDeploymentStatus");
  return {text(meta, "namespace", "default") + "/" + text(meta, "name"),
          text(spec, "submissionMode", "K8sJobMode"),
          std::to_string(failed + (deployment == "Failed" ? 0 : 1)),
          deployment,
          text(st, "jobStatus"),
          text(st, "rayClusterName"),
          created ? ageOf(nowMs - *created) : "",
          text(st, "reason")};
}

std::vector<std::string> renderLiveTable(const std::vector<LiveRow>& rows, const LiveFooter& footer,
                                         int width, bool colour) {
  std::array<size_t, 8> widths{};
  for (size_t c = 0; c < kHeaders.size(); ++c) widths[c] = std::string(kHeaders[c]).size();
  for (const auto& r : rows) {
    auto cs = cells(r);
    for (size_t c = 0; c < cs.size(); ++c) widths[c] = std::max(widths[c], cs[c].size());
  }
  std::array<bool, 8> shown;
  shown.fill(true);
  auto total = [&] {
    size_t sum = 0;
    for (size_t c = 0; c < widths.size(); ++c) sum += shown[c] ? widths[c] + 2 : 0;
    return sum;
  };
  for (size_t drop : kDropOrder)
    if (width > 0 && total() > size_t(width)) shown[drop] = false;
  auto line = [&](const std::array<std::string, 8>& cs, const std::string& status) {
    std::string out;
    for (size_t c = 0; c < cs.size(); ++c) {
      if (!shown[c]) continue;
      std::string cell = cs[c] + std::string(widths[c] + 2 - std::min(cs[c].size(), widths[c] + 2), ' ');
      out += c == 3 ? paint(status, cell, colour) : cell;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
  };
  std::vector<std::string> out;
  std::array<std::string, 8> header;
  for (size_t c = 0; c < header.size(); ++c) header[c] = kHeaders[c];
  out.push_back(line(header, ""));
  for (const auto& r : rows) out.push_back(line(cells(r), r.deployment));
  out.push_back(footerLine(footer));
  if (width > 0)
    for (auto& l : out)
      if (!colour && l.size() > size_t(width)) l.resize(size_t(width));
  return out;
}

std::vector<std::string> finalNotes(const std::vector<json>& rayjobs, const std::string& journalDir,
                                    const std::string& logFile,
                                    const std::vector<std::string>& deleted) {
  std::vector<std::string> notes{"", "What happened:"};
  std::string retried, example = rayjobs.empty() ? "" : text(rayjobs[0], "namespace") + "/" + text(rayjobs[0], "name");
  for (const auto& j : rayjobs) {
    const std::string key = text(j, "namespace") + "/" + text(j, "name");
    const std::string status = text(j, "jobDeploymentStatus"), reason = text(j, "reason");
    const int failed = j.value("failed", 0);
    if (failed > 0) {
      notes.push_back("  " + key + " failed " + std::to_string(failed) + (failed == 1 ? " attempt" : " attempts") +
                      " and was retried on a new RayCluster; it ended " + status +
                      (reason.empty() ? "" : " (" + reason + ")") + ".");
      if (retried.empty() || status == "Complete") retried = key;  // a retry that recovered
    } else if (status == "Failed" || status == "ValidationFailed") {
      notes.push_back("  " + key + " ended " + status + (reason.empty() ? "" : " (" + reason + ")") + ": " +
                      text(j, "message") + ".");
    } else if (status == "Waiting") {
      notes.push_back("  " + key + " waits for a user-set spec.jobId (InteractiveMode).");
    } else if (status != "Complete") {
      notes.push_back("  " + key + " is " + (status.empty() ? "New" : status) + ".");
    }
  }
  for (const auto& key : deleted)
    notes.push_back("  " + key + " was deleted during the run (its deletion rule, or a user); " +
                    "its history stays in the journal.");
  if (notes.size() == 2) notes.push_back("  every RayJob ran once and completed.");
  const std::string pick = retried.empty() ? example : retried;
  notes.push_back("");
  notes.push_back("Try next:");
  notes.push_back("  build/bin/rayjournal-replay --journal " + journalDir + " timeline " + pick);
  notes.push_back("  build/bin/rayjournal-replay --journal " + journalDir + " timeline " + pick +
                  " --html timeline.html");
  notes.push_back("    and open timeline.html in a browser");
  notes.push_back("  build/bin/rayjournal-replay --journal " + journalDir + " serve");
  notes.push_back("    and open http://127.0.0.1:8090/ (every RayJob, deleted ones too, live)");
  notes.push_back("  kill -9 the operator mid-run and start it again: the journal resolves what was in doubt");
  notes.push_back("  decision log: " + logFile);
  return notes;
}

void LiveScreen::clear() {
  if (!last_.empty()) out_ << "\x1b[" << last_.size() << "F\x1b[J";
}

void LiveScreen::paint(const std::vector<std::string>& lines) {
  std::lock_guard lock(mu_);
  if (live_) clear();
  for (const auto& l : lines) out_ << l << "\n";
  out_.flush();
  last_ = live_ ? lines : std::vector<std::string>{};
}

void LiveScreen::above(const std::string& line) {
  std::lock_guard lock(mu_);
  clear();
  out_ << line << "\n";
  for (const auto& l : last_) out_ << l << "\n";
  out_.flush();
}

void LiveScreen::release() {
  std::lock_guard lock(mu_);
  live_ = false;
  last_.clear();
}

}  // namespace rayjournal::operator_
