// The embedded demo's live table as a user reads it: columns sized to their content, columns
// dropped (never wrapped) on a narrow terminal, colour only when asked, and the closing notes.
#include "operator/EmbeddedRunner.h"
#include "operator/LiveTable.h"

#include <gtest/gtest.h>

namespace rayjournal::operator_ {
namespace {

std::vector<LiveRow> rows() {
  return {{"default/rayjob-deletion-rules", "K8sJobMode", "1", "Complete", "SUCCEEDED",
           "rayjob-deletion-rules-abcde", "12s", ""},
          {"default/rayjob-failed", "K8sJobMode", "2", "Failed", "FAILED", "rayjob-failed-xyz12",
           "12s", "AppFailed"}};
}

// Before, name and status ran into each other ("default/rayjob-deletion-rulesSUCCEEDED").
TEST(LiveTableTest, ColumnsAreSizedToTheirContent) {
  auto lines = renderLiveTable(rows(), {}, 200, false);
  ASSERT_EQ(lines.size(), 4u);  // header, two rows, footer
  EXPECT_EQ(lines[1].find("default/rayjob-deletion-rules  K8sJobMode"), 0u) << lines[1];
  EXPECT_EQ(lines[0].find("NAMESPACE/NAME"), 0u);
  EXPECT_EQ(lines[0].find("DEPLOYMENT STATUS"), lines[1].find("Complete"));
  EXPECT_NE(lines[3].find("RayJobs"), std::string::npos) << "the footer";
}

TEST(LiveTableTest, ANarrowTerminalDropsColumnsInsteadOfWrapping) {
  auto wide = renderLiveTable(rows(), {}, 200, false);
  auto narrow = renderLiveTable(rows(), {}, 80, false);
  EXPECT_NE(wide[0].find("RAYCLUSTER"), std::string::npos);
  EXPECT_EQ(narrow[0].find("RAYCLUSTER"), std::string::npos) << "the first to go";
  EXPECT_NE(narrow[0].find("DEPLOYMENT STATUS"), std::string::npos) << "kept";
  for (const auto& l : narrow) EXPECT_LE(l.size(), 80u) << l;
}

TEST(LiveTableTest, ColourOnlyWhenAskedAndOnlyForTerminalStates) {
  for (const auto& l : renderLiveTable(rows(), {}, 200, false))
    EXPECT_EQ(l.find('\x1b'), std::string::npos);
  auto coloured = renderLiveTable(rows(), {}, 200, true);
  EXPECT_NE(coloured[1].find("\x1b[32mComplete"), std::string::npos);
  EXPECT_NE(coloured[2].find("\x1b[31mFailed"), std::string::npos);
}

TEST(LiveTableTest, TheFooterCountsByStatusWithTheJournal) {
  LiveFooter f{{{"Complete", 1}, {"Failed", 1}}, 328, 71, 9.25};
  auto lines = renderLiveTable(rows(), f, 200, false);
  EXPECT_EQ(lines.back(), "2 RayJobs: 1 Complete, 1 Failed  |  journal 328 records, 71 syncs  |  9.2 s");
}

TEST(LiveTableTest, ClosingNotesSayWhatHappenedAndWhatToTryWithARealRayJob) {
  using nlohmann::json;
  std::vector<json> jobs{
      {{"namespace", "default"}, {"name", "ok"}, {"jobDeploymentStatus", "Complete"}, {"failed", 0}},
      {{"namespace", "default"}, {"name", "retry"}, {"jobDeploymentStatus", "Complete"},
       {"failed", 1}, {"reason", ""}},
      {{"namespace", "default"}, {"name", "wait"}, {"jobDeploymentStatus", "Waiting"}, {"failed", 0}}};
  auto notes = finalNotes(jobs, "rayjournal-data/journal", "rayjournal-data/operator.log",
                          {"default/gone"});
  std::string all;
  for (const auto& n : notes) all += n + "\n";
  EXPECT_NE(all.find("default/retry failed 1 attempt and was retried on a new RayCluster; it ended Complete."),
            std::string::npos) << all;
  EXPECT_NE(all.find("default/wait waits for a user-set spec.jobId"), std::string::npos);
  EXPECT_NE(all.find("default/gone was deleted during the run"), std::string::npos);
  EXPECT_EQ(all.find("default/ok "), std::string::npos) << "nothing to say about a plain success";
  EXPECT_NE(all.find("rayjournal-replay --journal rayjournal-data/journal timeline default/retry"),
            std::string::npos);
  EXPECT_NE(all.find("kill -9"), std::string::npos);
}

// The progress line of the demo's log: a value as long as its column (a 28-character RayJob key)
// is still followed by two spaces. Before, it was glued to the next column
// ("default/rayjob-deletion-rulesSUCCEEDED").
TEST(LiveTableTest, AProgressLineNeverGluesAColumnToTheNext) {
  nlohmann::json s = {{"namespace", "default"}, {"name", "rayjob-deletion-rules"}, {"jobStatus", "SUCCEEDED"},
                      {"jobDeploymentStatus", "Complete"}, {"attempt", 1}, {"rayClusterName", "c"},
                      {"reason", ""}};
  EXPECT_EQ(progressLine(s), "default/rayjob-deletion-rules  SUCCEEDED   Complete          attempt 1  c");
  s["name"] = "j";
  s["reason"] = "AppFailed";
  EXPECT_EQ(progressLine(s), "default/j                   SUCCEEDED   Complete          attempt 1  c  (AppFailed)");
}

}  // namespace
}  // namespace rayjournal::operator_
