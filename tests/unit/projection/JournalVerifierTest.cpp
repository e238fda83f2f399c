// verify on hand-made journals: each rule fires on the history that breaks it, and a journal
// from a real scenario run (with restarts) passes.
#include <gtest/gtest.h>

#include "projection/CheckpointCodec.h"
#include "projection/JobProjection.h"
#include "projection/JournalVerifier.h"
#include "support/Cbor.h"
#include "support/SimHarness.h"
#include "wal/MemoryStorage.h"
#include "wal/RecordCodec.h"

namespace rayjournal::testing {
namespace {

class HandMade {
 public:
  HandMade() {
    wal::JournalOptions options;
    options.lazyFlushInterval = std::chrono::milliseconds(0);
    journal = wal::Journal::open(storage, options);
  }
  uint64_t add(wal::RecordType type, json body, uint32_t attempt = 1) {
    wal::Record r;
    r.type = type;
    if (type != wal::RecordType::ControllerStarted)
      r.object = {"RayJob", "default", "job", "uid-1"};
    r.attempt = attempt;
    r.body = cbor(body);
    return journal->append(r, wal::Durability::Sync);
  }
  uint64_t intent(const std::string& action, const std::string& target, json extra = json::object(),
                  uint32_t attempt = 1) {
    json body{{"action", action}, {"target", target}};
    body.update(extra);
    uint64_t seq = add(wal::RecordType::Intent, body, attempt);
    actions[seq] = action;
    return seq;
  }
  void outcome(uint64_t seq, const std::string& result, uint32_t attempt = 1) {
    std::string action = actions.count(seq) ? actions[seq] : "WriteStatus";
    add(wal::RecordType::Outcome, {{"intent_seq", seq}, {"action", action}, {"result", result}},
        attempt);
  }
  std::map<uint64_t, std::string> actions;
  void attemptStarted(int attempt) {
    add(wal::RecordType::Observation,
        {{"observation", "AttemptStarted"},
         {"attempt", attempt},
         {"rayClusterName", "c" + std::to_string(attempt)},
         {"jobId", "s" + std::to_string(attempt)}},
        attempt);
  }
  std::vector<std::string> rules() {
    std::vector<std::string> out;
    for (const auto& v : projection::verifyJournal(*journal).violations) out.push_back(v.rule);
    return out;
  }
  std::shared_ptr<wal::MemoryStorage> storage = std::make_shared<wal::MemoryStorage>();
  std::unique_ptr<wal::Journal> journal;
};

TEST(JournalVerifierTest, CleanHistoryPasses) {
  HandMade h;
  h.attemptStarted(1);
  h.outcome(h.intent("CreateRayCluster", "c1"), "ok");
  h.outcome(h.intent("SubmitRayJob", "s1"), "ok");
  h.outcome(h.intent("WriteStatus", "job", {{"status", {{"jobDeploymentStatus", "Retrying"}}}}),
            "ok");
  h.attemptStarted(2);
  EXPECT_TRUE(h.rules().empty());
}

TEST(JournalVerifierTest, DuplicateSubmissionIsAViolation) {
  HandMade h;
  h.attemptStarted(1);
  h.outcome(h.intent("SubmitRayJob", "s1"), "ok");
  h.outcome(h.intent("SubmitRayJob", "s1"), "ok");
  EXPECT_EQ(h.rules(), std::vector<std::string>{"duplicate-side-effect"});
}

TEST(JournalVerifierTest, AdoptionIsNotADuplicate) {
  HandMade h;
  h.attemptStarted(1);
  h.outcome(h.intent("CreateRayCluster", "c1"), "ok");
  h.outcome(h.intent("CreateRayCluster", "c1"), "adopted");
  EXPECT_TRUE(h.rules().empty());
}

TEST(JournalVerifierTest, OutcomeWithoutIntentIsAViolation) {
  HandMade h;
  h.attemptStarted(1);
  h.outcome(999, "ok");
  EXPECT_EQ(h.rules(), std::vector<std::string>{"outcome-without-intent"});
}

TEST(JournalVerifierTest, AttemptIncrementAcrossRestartWithoutRetryIsAViolation) {
  HandMade h;
  h.attemptStarted(1);
  h.add(wal::RecordType::ControllerStarted, {{"epoch", 2}});
  h.attemptStarted(2);
  EXPECT_EQ(h.rules(), std::vector<std::string>{"attempt-without-retry"});
}

TEST(JournalVerifierTest, TamperedCheckpointIsAViolation) {
  HandMade h;
  h.attemptStarted(1);
  h.outcome(h.intent("CreateRayCluster", "c1"), "ok");
  projection::JobProjection p;
  h.journal->scan(0, [&](const wal::Record& r) {
    p.apply(r);
    return true;
  });
  auto [state, covers] = p.snapshot();
  uint64_t cp = h.journal->writeCheckpoint(covers, state);
  EXPECT_TRUE(h.rules().empty());
  std::string tampered = state;
  tampered[tampered.size() / 2] ^= 1;
  h.storage->write(
      {{wal::Column::Checkpoints, wal::encodeSeqKey(cp), wal::encodeSeqKey(covers) + tampered}},
      true);
  EXPECT_EQ(h.rules(), std::vector<std::string>{"checkpoint-mismatch"});
}

// A checkpoint written by an earlier version (RJP4) holds the same state in an older layout: not a
// mismatch with the replayed (RJP5) one.
TEST(JournalVerifierTest, ACheckpointInAnOlderFormatMatchesTheSameState) {
  HandMade h;
  h.attemptStarted(1);
  h.outcome(h.intent("CreateRayCluster", "c1"), "ok");
  h.intent("SubmitRayJob", "j1");
  projection::JobProjection p;
  h.journal->scan(0, [&](const wal::Record& r) {
    p.apply(r);
    return true;
  });
  projection::ProjectionStates states;
  uint64_t covers = 0;
  projection::decodeCheckpoint(p.checkpoint(), states, covers);
  h.journal->writeCheckpoint(covers, projection::encodeCheckpointV4(states, covers));
  EXPECT_TRUE(h.rules().empty());
  states.jobs.begin()->second.attempt += 1;
  h.journal->writeCheckpoint(covers, projection::encodeCheckpointV4(states, covers));
  EXPECT_EQ(h.rules(), std::vector<std::string>{"checkpoint-mismatch"});
}

// A Checkpoint record without its stored state is a violation, unless a later salvage record
// says that salvage dropped it (the history is whole; only replay's shortcut is gone).
TEST(JournalVerifierTest, CheckpointWithoutStateIsAViolationUnlessASalvageDroppedIt) {
  HandMade h;
  h.attemptStarted(1);
  uint64_t cp = h.journal->writeCheckpoint(1, "state");
  h.storage->write({{wal::Column::Checkpoints, wal::encodeSeqKey(cp), "", wal::WriteOp::Kind::Delete}},
                   true);
  EXPECT_EQ(h.rules(), std::vector<std::string>{"checkpoint-missing"});
  h.add(wal::RecordType::Observation,
        {{"observation", "JournalSalvaged"}, {"dropped_checkpoints", std::to_string(cp) + "-" +
                                                                       std::to_string(cp)}});
  auto report = projection::verifyJournal(*h.journal);
  EXPECT_TRUE(report.ok());
  EXPECT_EQ(report.checkpointsDropped, 1u);
}

TEST(JournalVerifierTest, ScenarioJournalWithRestartsPasses) {
  SimHarness h;
  json job = sampleRayJob("v", "HTTPMode", "FAILED,SUCCEEDED", "1s");
  job["spec"]["backoffLimit"] = 1;
  h.apply(job);
  for (int i = 0; i < 20; ++i) {
    h.step(300);
    h.restart();
  }
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("v") == "Complete"; }));
  auto report = projection::verifyJournal(*h.journal);
  EXPECT_TRUE(report.ok()) << report.violations.front().message;
  int restarts = 0;
  for (const auto& r : h.records()) restarts += r.type == wal::RecordType::ControllerStarted;
  EXPECT_GE(restarts, 20);
}

// An explicit spec.jobId is submitted again on each attempt's new cluster, as KubeRay does: the
// retry submits (no W8 "record lost" from the first attempt's submission), the RayJob
// completes, and verify counts one submission per attempt, not a duplicate.
TEST(JournalVerifierTest, AnExplicitJobIdIsSubmittedOncePerAttemptInEveryMode) {
  for (const char* mode : {"HTTPMode", "K8sJobMode", "SidecarMode"}) {
    SimHarness h;
    json job = sampleRayJob("fixed", mode, "FAILED,SUCCEEDED", "1s");
    job["spec"]["backoffLimit"] = 1;
    job["spec"]["jobId"] = "my-fixed-id";
    h.apply(job);
    ASSERT_TRUE(h.runUntil([&] {
      std::string s = h.deploymentStatus("fixed");
      return s == "Complete" || s == "Failed";
    })) << mode;
    json status = h.rayjob("fixed")["status"];
    EXPECT_EQ(status.value("jobDeploymentStatus", ""), "Complete") << mode << ": " << status.dump();
    EXPECT_EQ(status.value("failed", 0), 1) << mode;
    EXPECT_EQ(h.ray.submissions(), 2u) << mode << ": one submission per attempt";
    auto report = projection::verifyJournal(*h.journal);
    EXPECT_TRUE(report.ok()) << mode << ": " << report.violations.front().message;
  }
}

}  // namespace
}  // namespace rayjournal::testing
