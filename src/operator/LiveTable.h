// The embedded demo on a terminal: one table of the RayJobs, redrawn in place (kubectl get -w
// style), a footer of counts, and at the end what happened and what to try next. Rendering is
// pure (rows, width, colour in; lines out); LiveScreen owns the terminal and is thread-safe, so
// log warnings can be printed above the table while it is being redrawn.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace rayjournal::operator_ {

struct LiveRow {
  std::string name;  // namespace/name
  std::string mode, attempt, deployment, ray, cluster, age, reason;
};

struct LiveFooter {
  std::map<std::string, int> byStatus;  // deployment status -> RayJobs
  uint64_t records = 0, syncs = 0;
  double elapsedSeconds = 0;
};

// A row from a RayJob document (mode, status, age from its creationTimestamp and nowMs).
LiveRow liveRowOf(const nlohmann::json& rayjob, int64_t nowMs);
// The table: columns sized to their content; when wider than `width` it drops columns
// (RAYCLUSTER, then AGE, MODE, REASON, ATTEMPT) rather than wrapping, and cuts what is still
// too long. colour: green Complete, red Failed and ValidationFailed (ANSI).
std::vector<std::string> renderLiveTable(const std::vector<LiveRow>& rows, const LiveFooter& footer,
                                         int width, bool colour);
// What happened, one sentence per RayJob that did more than run once to success, then the next
// commands to try, naming a real RayJob of this run.
// deleted: RayJobs shown during the run that no longer exist (a DeleteSelf rule, a user).
std::vector<std::string> finalNotes(const std::vector<nlohmann::json>& rayjobs,
                                    const std::string& journalDir, const std::string& logFile,
                                    const std::vector<std::string>& deleted = {});

// The terminal: paint() replaces the last painted lines; above() prints a line (a warning)
// above them and paints them again. Writes to out only; never blocks on anything but out.
class LiveScreen {
 public:
  explicit LiveScreen(std::ostream& out) : out_(out) {}
  void paint(const std::vector<std::string>& lines);
  void above(const std::string& line);
  // Stops redrawing: later paints and lines are appended as they are.
  void release();

 private:
  void clear();
  std::ostream& out_;
  std::mutex mu_;
  std::vector<std::string> last_;
  bool live_ = true;
};

}  // namespace rayjournal::operator_
