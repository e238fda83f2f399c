// Ray token auth's names and env as KubeRay v1.7.0 derives them.
#include "model/TokenAuth.h"

#include <gtest/gtest.h>

namespace rayjournal::model {
namespace {

using nlohmann::json;

// KubeRay's CheckName: the last 50 characters, a leading digit or punctuation becomes 'r'.
TEST(TokenAuthTest, SecretNameIsKubeRaysCheckNameOfTheCluster) {
  json spec = {{"authOptions", {{"mode", "token"}}}};
  EXPECT_EQ(tokenAuthSecretName(spec, "job-abcde"), "job-abcde");
  std::string longName(40, 'a');
  longName += "-0123456789-zz";  // 54 characters: the first 4 go
  EXPECT_EQ(tokenAuthSecretName(spec, longName), longName.substr(4));
  EXPECT_EQ(checkName("1abc"), "rabc");
  EXPECT_EQ(checkName("a-" + std::string(49, 'x')), "r" + std::string(49, 'x'))
      << "cut to '-xxx...', then the punctuation replaced";
  EXPECT_EQ(tokenAuthSecretName({{"authOptions", {{"mode", "disabled"}}}}, "c"), "");
  EXPECT_EQ(tokenAuthSecretName({{"authOptions", {{"mode", "token"}, {"secretName", "mine"}}}}, "c"),
            "mine");
  EXPECT_EQ(tokenAuthSecretName(
                {{"authOptions", {{"mode", "token"}, {"enableK8sTokenAuth", true}}}}, "c"),
            "")
      << "Kubernetes-token auth needs no Secret";
}

TEST(TokenAuthTest, EnvIsAddedOnlyWhenAbsentAndTheTokenReadFromDataOrStringData) {
  json container = {{"env", json::array({{{"name", "RAY_AUTH_MODE"}, {"value", "token"}}})}};
  addTokenAuthEnv(container, "s");
  ASSERT_EQ(container["env"].size(), 2u);
  EXPECT_EQ(container["env"][1]["valueFrom"]["secretKeyRef"], json({{"name", "s"}, {"key", "auth_token"}}));
  EXPECT_EQ(tokenOfSecret({{"data", {{"auth_token", "c2VjcmV0LXRva2Vu"}}}}), "secret-token");
  EXPECT_EQ(tokenOfSecret({{"stringData", {{"auth_token", "plain"}}}}), "plain");
  EXPECT_EQ(tokenOfSecret({{"data", json::object()}}), "");
}

}  // namespace
}  // namespace rayjournal::model
