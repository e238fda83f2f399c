// The projection checkpoint format: RJP5 round-trips RayJobs and RayClusters byte for byte and
// splits into states that decode one at a time; RJP4, RJP3 (without replica failures) and RJP2
// (before RayClusters were journaled) are still read; damaged bytes are refused.
#include "projection/CheckpointCodec.h"

#include <gtest/gtest.h>

namespace rayjournal::projection {
namespace {

ProjectionStates sample() {
  ProjectionStates s;
  JobState job;
  job.uid = "u1";
  job.attempt = 2;
  job.attempts.push_back({1, 1, "j-abcde", "j-fghij", 10});
  job.intents[7] = {7, events::Action::WriteStatus, "j", 2, 11, 1, std::nullopt,
                    {{"jobDeploymentStatus", std::string("Running")}, {"failed", int64_t(1)}}};
  job.inDoubt.insert(7);
  job.submissions["j-fghij"] = 12;
  s.jobs["default/j"] = job;
  JobState cluster;
  cluster.uid = "c1";
  cluster.intents[9] = {9, events::Action::CreatePod, "j-abcde-head", 2, 13, 1,
                        events::Result::Ok, {}};
  cluster.inDoubt.insert(9);
  cluster.replicaFailureReason = "FailedCreateWorkerPod";
  cluster.replicaFailureMessage = "FailedCreateWorkerPod\nexceeded quota";
  s.clusters["default/j-abcde"] = cluster;
  return s;
}

TEST(CheckpointCodecTest, RoundTripKeepsRayJobsAndRayClustersAndIsDeterministic) {
  std::string bytes = encodeCheckpoint(sample(), 42);
  ProjectionStates back;
  uint64_t through = 0;
  decodeCheckpoint(bytes, back, through);
  EXPECT_EQ(through, 42u);
  ASSERT_EQ(back.clusters.count("default/j-abcde"), 1u);
  EXPECT_EQ(back.clusters["default/j-abcde"].intents.at(9).action, events::Action::CreatePod);
  EXPECT_EQ(back.clusters["default/j-abcde"].intents.at(9).outcome, events::Result::Ok);
  const auto& status = back.jobs["default/j"].intents.at(7).status;
  EXPECT_EQ(status.at("jobDeploymentStatus"), events::StatusValue(std::string("Running")));
  EXPECT_EQ(status.at("failed"), events::StatusValue(int64_t(1)));
  EXPECT_EQ(back.clusters["default/j-abcde"].replicaFailureMessage,
            "FailedCreateWorkerPod\nexceeded quota");
  EXPECT_EQ(encodeCheckpoint(back, through), bytes) << "same state, same bytes";
}

// A RayCluster's per-group worker index is an optional tail of its RJP5 body: kept through a
// round trip, and absent when empty, so the bytes of a state without it are those written before.
TEST(CheckpointCodecTest, TheWorkerIndexTailRoundTripsAndIsAbsentWhenEmpty) {
  ProjectionStates states = sample();
  std::string without = encodeCheckpoint(states, 3);
  states.clusters.begin()->second.nextWorkerIndex = {{"cpu-group", 4}, {"gpu", 1}};
  std::string with = encodeCheckpoint(states, 3);
  EXPECT_EQ(with.size(), without.size() + 2 + 1 + (1 + 9 + 1) + (1 + 3 + 1));  // tag, length
  ProjectionStates back;
  uint64_t through = 0;
  decodeCheckpoint(with, back, through);
  EXPECT_EQ(back.clusters.begin()->second.nextWorkerIndex,
            (std::map<std::string, uint64_t>{{"cpu-group", 4}, {"gpu", 1}}));
  EXPECT_EQ(encodeCheckpoint(back, through), with);
}

// Each RJP4 state ends with three strings (replica failure reason and message, last submit
// error) that RJP3 lacks.
TEST(CheckpointCodecTest, VersionThreeWithoutReplicaFailuresIsStillRead) {
  ProjectionStates states = sample();
  states.clusters.begin()->second.replicaFailureReason.clear();
  states.clusters.begin()->second.replicaFailureMessage.clear();
  std::string v4 = encodeCheckpointV4(states, 5);
  ProjectionStates jobsOnly = states;
  jobsOnly.clusters.clear();
  size_t jobEnd = encodeCheckpointV4(jobsOnly, 5).size() - 4;  // three empty strings, 0 clusters
  std::string v3 = "RJP3" + v4.substr(4, jobEnd - 4) +
                   v4.substr(jobEnd + 3, v4.size() - (jobEnd + 3) - 3);
  ProjectionStates back;
  uint64_t through = 0;
  decodeCheckpoint(v3, back, through);
  EXPECT_EQ(encodeCheckpointV4(back, through), v4) << "read as the same state";
}

TEST(CheckpointCodecTest, VersionTwoWithoutClustersIsStillRead) {
  ProjectionStates jobsOnly = sample();
  jobsOnly.clusters.clear();
  std::string bytes = encodeCheckpointV4(jobsOnly, 5);
  // RJP2 is RJP4 without the job's three failure strings and the (empty) RayCluster section.
  std::string v2 = "RJP2" + bytes.substr(4, bytes.size() - 8);
  ProjectionStates back;
  uint64_t through = 0;
  decodeCheckpoint(v2, back, through);
  EXPECT_EQ(back.jobs.size(), 1u);
  EXPECT_TRUE(back.clusters.empty());
}

TEST(CheckpointCodecTest, TruncatedOrForeignBytesAreRefused) {
  std::string bytes = encodeCheckpoint(sample(), 42);
  ProjectionStates back;
  uint64_t through = 0;
  EXPECT_THROW(decodeCheckpoint(bytes.substr(0, bytes.size() - 3), back, through),
               std::invalid_argument);
  EXPECT_THROW(decodeCheckpoint("RJP9xxxx", back, through), std::invalid_argument);
  EXPECT_THROW(decodeCheckpoint(bytes + "x", back, through), std::invalid_argument);
}

TEST(CheckpointCodecTest, VersionFourIsStillRead) {
  ProjectionStates back;
  uint64_t through = 0;
  decodeCheckpoint(encodeCheckpointV4(sample(), 42), back, through);
  EXPECT_EQ(through, 42u);
  EXPECT_EQ(encodeCheckpoint(back, through), encodeCheckpoint(sample(), 42));
}

TEST(CheckpointCodecTest, VersionFiveSplitsIntoStatesThatEachDecodeAlone) {
  const std::string bytes = encodeCheckpoint(sample(), 42);
  EncodedStates split;
  uint64_t through = 0;
  ASSERT_TRUE(splitCheckpoint(bytes, split, through));
  EXPECT_EQ(through, 42u);
  ASSERT_EQ(split.jobs.size(), 1u);
  ASSERT_EQ(split.clusters.size(), 1u);
  EXPECT_EQ(split.jobs[0].key, "default/j");
  EXPECT_TRUE(split.jobs[0].inDoubt);
  const JobState job = decodeState(split.jobs[0]);
  EXPECT_EQ(job.uid, "u1");
  EXPECT_EQ(job.intents.at(7).status.at("failed"), events::StatusValue(int64_t(1)));
  EXPECT_EQ(decodeState(split.clusters[0]).replicaFailureReason, "FailedCreateWorkerPod");
  EncodedStates none;
  EXPECT_FALSE(splitCheckpoint(encodeCheckpointV4(sample(), 42), none, through));
  EXPECT_TRUE(none.jobs.empty());
}

// A state never decoded is copied into the next checkpoint as it was: the same bytes as a
// checkpoint of the whole decoded state.
TEST(CheckpointCodecTest, UntouchedStatesAreWrittenBackAsTheyWere) {
  ProjectionStates states = sample();
  JobState other;
  other.uid = "u0";
  states.jobs["default/a"] = other;
  const std::string bytes = encodeCheckpoint(states, 42);
  EncodedStates split;
  uint64_t through = 0;
  ASSERT_TRUE(splitCheckpoint(bytes, split, through));
  ASSERT_EQ(split.jobs.size(), 2u);
  EXPECT_FALSE(split.jobs[0].inDoubt) << "default/a has nothing in doubt";
  // Only default/j decoded (and changed back to what it was): merged in key order.
  std::map<std::string, JobState> decodedJobs{{"default/j", decodeState(split.jobs[1])}};
  split.jobs[1].taken = true;
  EXPECT_EQ(encodeCheckpoint(decodedJobs, {}, split, through), bytes);
}

TEST(CheckpointCodecTest, AStateThatDoesNotDecodeIsNamed) {
  std::string bytes = encodeCheckpoint(sample(), 42);
  EncodedStates split;
  uint64_t through = 0;
  ASSERT_TRUE(splitCheckpoint(bytes, split, through));
  EncodedState cut = split.jobs[0];
  cut.body = cut.body.substr(0, cut.body.size() / 2);
  try {
    decodeState(cut);
    FAIL() << "a truncated state decoded";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("default/j"), std::string::npos) << e.what();
  }
}

TEST(CheckpointCodecTest, KeysOutOfOrderAreRefused) {
  ProjectionStates states;
  states.jobs["default/a"].uid = "a";
  states.jobs["default/b"].uid = "b";
  std::string bytes = encodeCheckpoint(states, 1);
  // Swap the two keys' single differing byte: b's entry first.
  const size_t a = bytes.find("default/a"), b = bytes.find("default/b");
  std::swap(bytes[a + 8], bytes[b + 8]);
  EncodedStates split;
  uint64_t through = 0;
  EXPECT_THROW(splitCheckpoint(bytes, split, through), std::invalid_argument);
}

}  // namespace
}  // namespace rayjournal::projection
