// The environment variables KubeRay's users set on its Deployment mean the same here.
#include "operator/KubeRayEnvironment.h"

#include <gtest/gtest.h>

#include <map>

namespace rayjournal::operator_ {
namespace {

controller::DecideConfig withEnv(const std::map<std::string, std::string>& vars) {
  controller::DecideConfig config;
  applyKubeRayEnvironment(config, [&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
  return config;
}

// Before, these variables were ignored: the timeouts stayed 300 s and the dashboard URL used
// cluster.local whatever the cluster's domain.
TEST(KubeRayEnvironmentTest, TimeoutsGracePeriodAndClusterDomainAreRead) {
  auto c = withEnv({{"RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS", "60"},
                    {"RAYJOB_DEPLOYMENT_STATUS_TRANSITION_GRACE_PERIOD_SECONDS", "10"},
                    {"CLUSTER_DOMAIN", "corp.example"}});
  EXPECT_EQ(c.statusCheckTimeoutMs, 60000);
  EXPECT_EQ(c.transitionGracePeriodMs, 10000);
  EXPECT_EQ(c.clusterDomain, "corp.example");
}

TEST(KubeRayEnvironmentTest, UnparsableValuesFallBackToKubeRaysDefaults) {
  auto c = withEnv({{"RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS", "0"},
                    {"RAYJOB_DEPLOYMENT_STATUS_TRANSITION_GRACE_PERIOD_SECONDS", "5m"},
                    {"CLUSTER_DOMAIN", ""},
                    {"DELETE_RAYJOB_CR_AFTER_JOB_FINISHES", "TRUE"}});
  EXPECT_EQ(c.statusCheckTimeoutMs, 300000) << "KubeRay: <= 0 is the default";
  EXPECT_EQ(c.transitionGracePeriodMs, 300000) << "KubeRay: a parse error is the default";
  EXPECT_EQ(c.clusterDomain, "cluster.local");
  EXPECT_FALSE(c.deleteRayJobAfterJobFinishes) << "KubeRay compares with \"true\" exactly";
  EXPECT_EQ(withEnv({{"RAYJOB_DEPLOYMENT_STATUS_TRANSITION_GRACE_PERIOD_SECONDS", "0"}})
                .transitionGracePeriodMs,
            0);
  EXPECT_TRUE(withEnv({{"DELETE_RAYJOB_CR_AFTER_JOB_FINISHES", "true"}}).deleteRayJobAfterJobFinishes);
}

// Before, these were ignored: the submitter never ran a login shell and every Pod got probes
// and the wait-gcs-ready init container.
TEST(KubeRayEnvironmentTest, LoginShellAndInjectionSwitchesAreReadCaseInsensitively) {
  auto c = withEnv({{"ENABLE_LOGIN_SHELL", "True"},
                    {"ENABLE_PROBES_INJECTION", "FALSE"},
                    {"ENABLE_INIT_CONTAINER_INJECTION", "false"}});
  EXPECT_TRUE(c.loginShell);
  EXPECT_FALSE(c.injectProbes);
  EXPECT_FALSE(c.injectWaitGcsReady);
  auto d = withEnv({{"ENABLE_LOGIN_SHELL", "yes"},
                    {"ENABLE_PROBES_INJECTION", "0"},
                    {"ENABLE_INIT_CONTAINER_INJECTION", ""}});
  EXPECT_FALSE(d.loginShell) << "only \"true\" turns it on";
  EXPECT_TRUE(d.injectProbes) << "only \"false\" turns it off";
  EXPECT_TRUE(d.injectWaitGcsReady);
}

}  // namespace
}  // namespace rayjournal::operator_
