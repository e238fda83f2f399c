#include <gtest/gtest.h>

#include "projection/JobProjection.h"
#include "projection/RunIndex.h"
#include "support/Cbor.h"

namespace rayjournal::projection {
namespace {

wal::Record rec(uint64_t seq, wal::RecordType type, nlohmann::json body,
                const std::string& name = "job") {
  wal::Record r;
  r.seq = seq;
  r.timeMs = 1000 + int64_t(seq);
  r.epoch = 1;
  r.type = type;
  r.object = {"RayJob", "default", name, "uid-" + name};
  r.attempt = 1;
  r.body = testing::cbor(body);
  return r;
}

std::vector<wal::Record> history() {
  using wal::RecordType;
  return {
      rec(1, RecordType::Observation,
          {{"observation", "AttemptStarted"},
           {"attempt", 1},
           {"incarnation", 1},
           {"rayClusterName", "job-abcde"},
           {"jobId", "job-fghjk"}}),
      rec(2, RecordType::Intent, {{"action", "CreateRayCluster"}, {"target", "job-abcde"}}),
      rec(3, RecordType::Outcome, {{"intent_seq", 2}, {"action", "CreateRayCluster"}, {"result", "ok"}}),
      rec(4, RecordType::Intent, {{"action", "SubmitRayJob"}, {"target", "job-fghjk"}}),
      rec(5, RecordType::Outcome, {{"intent_seq", 4}, {"action", "SubmitRayJob"}, {"result", "ok"}}),
      rec(6, RecordType::Intent,
          {{"action", "WriteStatus"},
           {"target", "job"},
           {"status", {{"jobDeploymentStatus", "Running"}}}}),
      rec(7, RecordType::Intent, {{"action", "CreateSubmitterJob"}, {"target", "other"}}, "other")};
}

TEST(ProjectionTest, SameRecordsGiveByteIdenticalCheckpoints) {
  JobProjection a, b;
  for (const auto& r : history()) a.apply(r);
  for (const auto& r : history()) b.apply(r);
  EXPECT_EQ(a.checkpoint(), b.checkpoint());
  EXPECT_EQ(a.appliedThrough(), 7u);
}

// Every worker name a CreatePod intent journaled moves its group's first fresh index past it,
// whatever became of the Pod; a new RayCluster under the same name (another uid) starts over.
TEST(ProjectionTest, AClustersJournaledWorkerNamesSetItsNextWorkerIndex) {
  auto clusterRec = [](uint64_t seq, const std::string& pod, const std::string& uid) {
    wal::Record r = rec(seq, wal::RecordType::Intent, {{"action", "CreatePod"}, {"target", pod}}, "rc");
    r.object = {"RayCluster", "default", "rc", uid};
    return r;
  };
  JobProjection p;
  p.apply(clusterRec(1, "rc-head", "u1"));
  p.apply(clusterRec(2, "rc-cpu-worker-0", "u1"));
  p.apply(clusterRec(3, "rc-cpu-worker-4", "u1"));
  p.apply(clusterRec(4, "rc-cpu-worker-2", "u1"));
  p.apply(clusterRec(5, "rc-a-worker-b-worker-7", "u1"));
  using Next = std::map<std::string, uint64_t>;
  EXPECT_EQ(p.nextWorkerIndex("default/rc", "u1"), (Next{{"a-worker-b", 8}, {"cpu", 5}}));
  EXPECT_EQ(p.nextWorkerIndex("default/rc", "other-uid"), Next{});
  JobProjection restored;
  restored.restore(p.checkpoint());
  EXPECT_EQ(restored.nextWorkerIndex("default/rc", "u1"), (Next{{"a-worker-b", 8}, {"cpu", 5}}));
  p.apply(clusterRec(6, "rc-cpu-worker-0", "u2"));
  EXPECT_EQ(p.nextWorkerIndex("default/rc", "u2"), (Next{{"cpu", 1}}));
}

TEST(ProjectionTest, RestoreThenTailEqualsFullReplay) {
  auto records = history();
  JobProjection full;
  for (const auto& r : records) full.apply(r);
  JobProjection head;
  for (size_t i = 0; i < 4; ++i) head.apply(records[i]);
  JobProjection restored;
  restored.restore(head.checkpoint());
  for (size_t i = 4; i < records.size(); ++i) restored.apply(records[i]);
  EXPECT_EQ(restored.checkpoint(), full.checkpoint());
}

TEST(ProjectionTest, TracksAttemptsSubmissionsAndInDoubtIntents) {
  JobProjection p;
  for (const auto& r : history()) p.apply(r);
  auto job = p.job("default/job");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->attempt, 1u);
  ASSERT_EQ(job->attempts.size(), 1u);
  EXPECT_EQ(job->attempts[0].rayClusterName, "job-abcde");
  EXPECT_EQ(job->firstStartMs, 1001);
  EXPECT_TRUE(job->submissions.count("job-fghjk"));
  auto doubts = p.inDoubt();
  ASSERT_EQ(doubts.size(), 2u);  // the status write and the other job's create
  auto facts = p.facts("default/job", "job-fghjk");
  EXPECT_EQ(facts.nextIncarnation, 2u);
  EXPECT_TRUE(facts.submittedIds.count("job-fghjk"));
}

// The last written status follows one rule wherever it is read (projection/LastStatus.h): the
// projection recovery uses and the run index `list` and the UI use agree after a landed write, a
// failed one, a drift and a RayJob created again under its name. Before, the run index ignored
// drifts and listed a status Kubernetes no longer had.
TEST(ProjectionTest, TheProjectionAndTheRunIndexAgreeOnTheLastWrittenStatus) {
  using wal::RecordType;
  auto write = [](uint64_t seq, const char* status) {
    return rec(seq, RecordType::Intent, {{"action", "WriteStatus"}, {"target", "job"},
                                         {"status", {{"jobDeploymentStatus", status}}}});
  };
  auto outcome = [](uint64_t seq, uint64_t intent, const char* result) {
    return rec(seq, RecordType::Outcome,
               {{"intent_seq", intent}, {"action", "WriteStatus"}, {"result", result}});
  };
  wal::Record reborn = write(7, "New");
  reborn.object.uid = "uid-job-2";
  const std::vector<std::pair<wal::Record, std::string>> steps = {
      {write(1, "Running"), ""},
      {outcome(2, 1, "ok"), "Running"},
      {write(3, "Complete"), "Running"},
      {outcome(4, 3, "error"), "Running"},
      {rec(5, RecordType::Observation, {{"observation", "Drift"}, {"journal_expected", "Running"},
                                        {"kubernetes_has", "Failed"}, {"decision", "follow"}}),
       "Failed"},
      {rec(6, RecordType::Observation, {{"observation", "RayJobTerminal"}, {"status", "FAILED"}}),
       "Failed"},
      {reborn, ""},
  };
  JobProjection projection;
  RunIndex runs;
  for (const auto& [record, want] : steps) {
    projection.apply(record);
    runs.apply(record);
    EXPECT_EQ(projection.job("default/job")->lastDeploymentStatus, want) << "seq " << record.seq;
    EXPECT_EQ(runs.newest("default", "job")->status, want) << "seq " << record.seq;
  }
  EXPECT_EQ(runs.runs().size(), 2u) << "the reborn RayJob is a run of its own";
}

// A restored checkpoint's states are decoded on first use: every reader and apply() sees the
// same state as a projection that replayed everything, and a checkpoint written before any of
// them was read is byte for byte the one restored.
TEST(ProjectionTest, ARestoredStateReadsTheSameWhetherDecodedOrNot) {
  auto records = history();
  JobProjection full;
  for (const auto& r : records) full.apply(r);
  const std::string bytes = full.checkpoint();
  JobProjection untouched;
  untouched.restore(bytes);
  EXPECT_EQ(untouched.checkpoint(), bytes);
  EXPECT_EQ(untouched.jobCount(), full.jobCount());
  JobProjection read;
  read.restore(bytes);
  EXPECT_EQ(read.job("default/job")->attempts.size(), full.job("default/job")->attempts.size());
  EXPECT_EQ(read.inDoubt().size(), full.inDoubt().size());
  EXPECT_EQ(read.toJson(), full.toJson());
  EXPECT_EQ(read.checkpoint(), bytes);
  EXPECT_EQ(read.jobCount(), full.jobCount());
  JobProjection applied;
  applied.restore(bytes);
  JobProjection both;
  both.restore(bytes);
  wal::Record next = records.back();
  next.seq = 100;
  applied.apply(next);
  both.job("default/other");
  both.apply(next);
  EXPECT_EQ(applied.checkpoint(), both.checkpoint());
  EXPECT_NE(applied.checkpoint(), bytes);
}

// A checkpoint short enough for a string's inline buffer: its one (empty) state must still
// point into the bytes the projection kept.
TEST(ProjectionTest, AShortCheckpointsStatesPointIntoTheKeptBytes) {
  JobProjection p;
  p.restore(std::string("RJP5\x00\x01\x01k\x00\x00\x00", 11));
  EXPECT_EQ(p.jobCount(), 1u);
  EXPECT_THROW(p.job("k"), std::invalid_argument) << "an empty state does not decode";
  EXPECT_EQ(p.checkpoint(), std::string("RJP5\x00\x01\x01k\x00\x00\x00", 11));
}

TEST(ProjectionTest, RejectsBytesThatAreNotACheckpoint) {
  JobProjection p;
  EXPECT_THROW(p.restore("not a checkpoint"), std::exception);
}

}  // namespace
}  // namespace rayjournal::projection
