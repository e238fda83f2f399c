// Record bodies: every typed body round-trips through its bytes, bodies written before the typed
// events (hand-made maps with the same keys) still decode, and a body that is not what its
// record type promises is corruption naming the seq.
#include "events/EventCodec.h"

#include <gtest/gtest.h>

#include "events/RecordJson.h"
#include "support/Cbor.h"
#include "wal/JournalError.h"

namespace rayjournal::events {
namespace {

wal::Record recordOf(wal::RecordType type, std::string body, uint64_t seq = 17) {
  wal::Record r;
  r.seq = seq;
  r.type = type;
  r.body = std::move(body);
  return r;
}

TEST(EventCodecTest, EveryBodyRoundTrips) {
  IntentBody intent{Action::WriteStatus, "job", "because", {}, "", "", "default/job"};
  intent.status = {{"jobDeploymentStatus", std::string("Running")}, {"failed", int64_t(2)}};
  EXPECT_EQ(decodeIntent(recordOf(wal::RecordType::Intent, encode(intent))), intent);
  OutcomeBody error{9, Action::CreatePod, "c-head", Result::Error, "quota", 403};
  EXPECT_EQ(decodeOutcome(recordOf(wal::RecordType::Outcome, encode(error))), error);
  OutcomeBody found{9, Action::CreatePod, "c-head", Result::Found, "", std::nullopt};
  EXPECT_EQ(decodeOutcome(recordOf(wal::RecordType::Outcome, encode(found))), found);
  for (Observation o : {Observation{AttemptStarted{2, 3, "c", "s"}},
                        Observation{RayJobTerminal{"SUCCEEDED", "s"}},
                        Observation{Drift{"Running", "Complete", "Kubernetes is authoritative"}},
                        Observation{ChildMissing{"Job", "job", "s"}},
                        Observation{SubmissionSeen{"s", "RUNNING"}},
                        Observation{JournalSalvaged{41, "bad block", "/j.corrupt", "42-50", 3, "f.sst: x", "60-60"}},
                        Observation{SpecChanged{4, "kubectl", "small: replicas 2"}},
                        Observation{FieldIgnored{"spec.networkPolicy", "no NetworkPolicy is created"}}})
    EXPECT_EQ(decodeObservation(recordOf(wal::RecordType::Observation, encode(o))), o);
  ControllerStarted started{4, 1, 300, 250};
  EXPECT_EQ(decodeControllerStarted(recordOf(wal::RecordType::ControllerStarted, encode(started))),
            started);
}

// The timeline's line for an unimplemented field names the path and what is done instead.
TEST(EventCodecTest, AnIgnoredFieldReadsAsItsPathAndWhatIsDoneInstead) {
  wal::Record r = recordOf(wal::RecordType::Observation,
                           encode(Observation{FieldIgnored{"spec.tlsOptions", "no mTLS certificates"}}));
  EXPECT_EQ(recordText(r, bodyToJson(r)),
            "observe  spec.tlsOptions is set but not implemented: no mTLS certificates");
}

TEST(EventCodecTest, AResolutionIsWrittenUnderItsOwnKey) {
  OutcomeBody absent{5, Action::CreateRayCluster, "c", Result::Absent, "", std::nullopt};
  auto map = bodyToJson(recordOf(wal::RecordType::Outcome, encode(absent)));
  EXPECT_EQ(map["resolved_after_restart"], "absent");
  EXPECT_FALSE(map.contains("result"));
}

TEST(EventCodecTest, BodiesFromBeforeTypedEventsStillDecode) {
  auto old = testing::cbor({{"action", "CreateSubmitterJob"},
                            {"target", "job"},
                            {"submission_id", "job-abcde"},
                            {"why", "cluster ready"},
                            {"a_key_from_a_newer_writer", true}});
  IntentBody intent = decodeIntent(recordOf(wal::RecordType::Intent, old));
  EXPECT_EQ(intent.action, Action::CreateSubmitterJob);
  EXPECT_EQ(intent.submissionId, "job-abcde");
}

TEST(EventCodecTest, AnUnknownActionIsCorruptionNamingTheSeq) {
  auto bad = testing::cbor({{"action", "LaunchRockets"}, {"target", "x"}});
  try {
    decodeIntent(recordOf(wal::RecordType::Intent, bad, 123));
    FAIL() << "decoded an unknown action";
  } catch (const wal::CorruptionError& e) {
    EXPECT_EQ(e.seq(), 123u);
    EXPECT_NE(std::string(e.what()).find("action"), std::string::npos) << e.what();
  }
}

TEST(EventCodecTest, BytesThatAreNotAMapAreCorruption) {
  EXPECT_THROW(decodeOutcome(recordOf(wal::RecordType::Outcome, "\xff\x01garbage")),
               wal::CorruptionError);
  EXPECT_THROW(decodeIntent(recordOf(wal::RecordType::Intent, testing::cbor({1, 2}))),
               wal::CorruptionError);
}

TEST(EventCodecTest, AFieldOfTheWrongTypeIsCorruption) {
  auto bad = testing::cbor({{"intent_seq", "seven"}, {"action", "CreatePod"}, {"result", "ok"}});
  EXPECT_THROW(decodeOutcome(recordOf(wal::RecordType::Outcome, bad)), wal::CorruptionError);
}

TEST(EventCodecTest, AnObservationOfAnUnknownKindIsSkippedNotRefused) {
  auto future = testing::cbor({{"observation", "SomethingNew"}, {"x", 1}});
  EXPECT_EQ(decodeObservation(recordOf(wal::RecordType::Observation, future)), std::nullopt);
}

}  // namespace
}  // namespace rayjournal::events
