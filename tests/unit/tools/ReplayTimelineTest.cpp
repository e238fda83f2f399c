#include <gtest/gtest.h>

#include <sstream>

#include "events/EventCodec.h"
#include "replay/ReplayCommands.h"
#include "support/TempDir.h"
#include "wal/Journal.h"

namespace rayjournal::replay {
namespace {

using events::Action;
using rayjournal::testing::TempDir;

const wal::ObjectRef kRayJob{"RayJob", "default", "retry", "uid-retry"};

wal::Record record(wal::RecordType type, const wal::ObjectRef& object, std::string body) {
  wal::Record r;
  r.type = type;
  r.object = object;
  r.attempt = 1;
  r.body = std::move(body);
  return r;
}

void startAttempt(wal::Journal& journal, const std::string& cluster) {
  events::Observation started = events::AttemptStarted{1, 1, cluster, cluster + "-job"};
  journal.append(record(wal::RecordType::Observation, kRayJob, events::encode(started)),
                 wal::Durability::Sync);
}

uint64_t intendCluster(wal::Journal& journal, const std::string& cluster) {
  events::IntentBody intent{Action::CreateRayCluster, cluster, "new attempt", {}, "", "", ""};
  return journal.append(record(wal::RecordType::Intent, kRayJob, events::encode(intent)),
                        wal::Durability::Sync);
}

void outcome(wal::Journal& journal, uint64_t intentSeq, const std::string& cluster,
             events::Result result) {
  events::OutcomeBody body{intentSeq, Action::CreateRayCluster, cluster, result, "", {}};
  journal.append(record(wal::RecordType::Outcome, kRayJob, events::encode(body)),
                 wal::Durability::Sync);
}

void clusterCreatesItsHead(wal::Journal& journal, const std::string& cluster) {
  events::IntentBody intent{Action::CreatePod, cluster + "-head", "head", {}, "", "",
                            "default/retry"};
  journal.append(
      record(wal::RecordType::Intent, {"RayCluster", "default", cluster, "uid-" + cluster},
             events::encode(intent)),
      wal::Durability::Sync);
}

std::vector<std::string> pointedAt(const std::string& timelineText) {
  std::vector<std::string> clusters;
  std::istringstream lines(timelineText);
  for (std::string line; std::getline(lines, line);) {
    auto at = line.find("timeline raycluster/default/");
    if (at != std::string::npos) clusters.push_back(line.substr(at + 28));
  }
  return clusters;
}

// A kill between the first plan's CreateRayCluster intent and its call: the restart finds the
// RayCluster absent and the next epoch names a new one. Only the one that exists has a timeline.
TEST(ReplayTimelineTest, PointsOnlyAtRayClustersThatWereCreated) {
  TempDir dir;
  {
    auto journal = wal::Journal::open(dir.path());
    startAttempt(*journal, "retry-never");
    intendCluster(*journal, "retry-never");
  }
  {
    auto journal = wal::Journal::open(dir.path());
    outcome(*journal, 2, "retry-never", events::Result::Absent);
    startAttempt(*journal, "retry-made");
    outcome(*journal, intendCluster(*journal, "retry-made"), "retry-made", events::Result::Ok);
    clusterCreatesItsHead(*journal, "retry-made");
  }
  std::ostringstream out;
  ASSERT_EQ(timeline(dir.path(), {"default", "retry", "RayJob"}, false, false, out), 0) << out.str();
  EXPECT_EQ(pointedAt(out.str()), std::vector<std::string>{"retry-made"}) << out.str();
}

}  // namespace
}  // namespace rayjournal::replay
