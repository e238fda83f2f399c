// The step the operator and rayjournal-replay share from a token-auth RayCluster to its token.
#include <gtest/gtest.h>

#include "adapters/ClusterToken.h"
#include "adapters/sim/SimKube.h"

namespace rayjournal::adapters {
namespace {

using nlohmann::json;
using Result = ClusterTokenUse::Result;

// Remembers the tokens it was handed; answers nothing else.
class TokenRecorder : public ray::RayJobsClient {
 public:
  std::optional<ray::JobInfo> getJob(const std::string&, const std::string&) override {
    return std::nullopt;
  }
  ray::SubmitResult submit(const std::string&, const ray::SubmitRequest&) override {
    return ray::SubmitResult::Submitted;
  }
  bool stop(const std::string&, const std::string&) override { return false; }
  void useAuthToken(const std::string& dashboard, const std::string& token) override {
    tokens[dashboard] = token;
  }
  std::map<std::string, std::string> tokens;
};

json cluster(const json& authOptions) {
  return {{"metadata", {{"name", "c"}, {"namespace", "ns"}}},
          {"spec", {{"authOptions", authOptions}}}};
}

TEST(ClusterTokenTest, TheSecretsTokenGoesToThatDashboardOnly) {
  ManualClock clock;
  sim::SimKube kube(clock);
  kube.create("Secret", {{"metadata", {{"name", "c"}, {"namespace", "ns"}}},
                         {"stringData", {{"auth_token", "s3cret"}}}});
  TokenRecorder ray;
  auto use = useClusterToken(kube, ray, cluster({{"mode", "token"}}), "c-head-svc:8265");
  EXPECT_EQ(use.result, Result::Used);
  EXPECT_EQ(ray.tokens, (std::map<std::string, std::string>{{"c-head-svc:8265", "s3cret"}}));
}

TEST(ClusterTokenTest, AMissingSecretIsNamedAndNoTokenIsUsed) {
  ManualClock clock;
  sim::SimKube kube(clock);
  TokenRecorder ray;
  auto use = useClusterToken(kube, ray, cluster({{"mode", "token"}, {"secretName", "mine"}}),
                             "c-head-svc:8265");
  EXPECT_EQ(use.result, Result::Missing);
  EXPECT_EQ(use.secretName, "mine");
  EXPECT_TRUE(ray.tokens.empty());
}

TEST(ClusterTokenTest, AClusterWithoutTokenAuthNeedsNoRead) {
  ManualClock clock;
  sim::SimKube kube(clock);
  TokenRecorder ray;
  EXPECT_EQ(useClusterToken(kube, ray, cluster({{"mode", "disabled"}}), "d").result,
            Result::NotNeeded);
  EXPECT_TRUE(ray.tokens.empty());
}

}  // namespace
}  // namespace rayjournal::adapters
