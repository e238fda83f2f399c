// The `ray start` line as KubeRay renders it from rayStartParams.
#include <gtest/gtest.h>

#include "controller/raycluster/RayStart.h"

namespace rayjournal::controller {
namespace {

TEST(RayStartTest, FlagsAreSortedTrueIsBareFalseIsDropped) {
  StartParams p{{"num-cpus", "2"}, {"block", "true"}, {"disable-usage-stats", "True"},
                {"include-log-monitor", "false"}, {"verbose", "false"}};
  EXPECT_EQ(rayStartFlags(p),
            " --block  --disable-usage-stats  --include-log-monitor=false  --num-cpus=2 ");
}

TEST(RayStartTest, ExplicitBooleanFlagsKeepTheirValue) {
  EXPECT_EQ(rayStartFlags({{"log-color", "true"}, {"include-dashboard", "false"}}),
            " --include-dashboard=false  --log-color=true ");
}

TEST(RayStartTest, MissingParamsGetKubeRaysDefaults) {
  StartParams head;
  completeStartParams(head, true, "ignored:1");
  EXPECT_EQ(rayStartCommand(true, head),
            "ray start --head  --block  --dashboard-agent-listen-port=52365  "
            "--dashboard-host=0.0.0.0  --metrics-export-port=8080 ");
  StartParams worker{{"block", "false"}, {"metrics-export-port", "9090"}};
  completeStartParams(worker, false, "c-head-svc.ns.svc.cluster.local:6379");
  EXPECT_EQ(worker["address"], "c-head-svc.ns.svc.cluster.local:6379");
  EXPECT_EQ(worker["block"], "true") << "always blocks, or the container would exit";
  EXPECT_EQ(worker["metrics-export-port"], "9090") << "the user's value is kept";
  EXPECT_FALSE(worker.count("dashboard-host"));
}

TEST(RayStartTest, TheUsersCommandRunsBeforeRayStart) {
  EXPECT_EQ(containerScript("", "ray start --head "),
            "ulimit -n ${RAY_START_ULIMIT_OPEN_FILES:-65536}; ray start --head ");
  EXPECT_EQ(containerScript(" echo  hi ", "ray start "),
            " echo  hi  && ulimit -n ${RAY_START_ULIMIT_OPEN_FILES:-65536}; ray start ");
}

TEST(RayStartTest, HeadPortAndPortParams) {
  EXPECT_EQ(headPortOf({}), "6379");
  EXPECT_EQ(headPortOf({{"port", "7000"}}), "7000");
  EXPECT_EQ(portParam({{"dashboard-port", "9000"}}, "dashboard-port", 8265), 9000);
  EXPECT_EQ(portParam({{"dashboard-port", "x9"}}, "dashboard-port", 8265), 8265);
}

}  // namespace
}  // namespace rayjournal::controller
