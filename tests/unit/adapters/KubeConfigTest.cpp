// kubeconfig loading: contexts, files relative to the kubeconfig, errors that name the file.
#include "adapters/kube/KubeConfig.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/TempDir.h"

namespace rayjournal::kube {
namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

const char* kTwoContexts = R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: Q0EgUEVN
- name: prod-cluster
  cluster:
    server: https://prod.example:443
    certificate-authority: certs/ca.pem
users:
- name: dev-user
  user:
    token: dev-token
- name: prod-user
  user:
    client-certificate: certs/client.pem
    client-key-data: S0VZ
contexts:
- name: dev
  context: {cluster: dev-cluster, user: dev-user, namespace: team-a}
- name: prod
  context: {cluster: prod-cluster, user: prod-user}
)";

TEST(KubeConfigTest, CurrentContextWithInlineDataAndToken) {
  testing::TempDir dir;
  write(dir.sub("config"), kTwoContexts);
  KubeConfig c = KubeConfig::fromFile(dir.sub("config"), "");
  EXPECT_EQ(c.server, "https://127.0.0.1:6443");
  EXPECT_EQ(c.tls.caPem, "CA PEM");
  EXPECT_EQ(c.token, "dev-token");
  EXPECT_EQ(c.defaultNamespace, "team-a");
  EXPECT_NE(c.source.find("context dev"), std::string::npos);
}

TEST(KubeConfigTest, NamedContextReadsFilesRelativeToTheKubeconfig) {
  testing::TempDir dir;
  write(dir.sub("config"), kTwoContexts);
  std::filesystem::create_directories(dir.sub("certs"));
  write(dir.sub("certs/ca.pem"), "prod CA");
  write(dir.sub("certs/client.pem"), "prod cert");
  KubeConfig c = KubeConfig::fromFile(dir.sub("config"), "prod");
  EXPECT_EQ(c.server, "https://prod.example:443");
  EXPECT_EQ(c.tls.caPem, "prod CA");
  EXPECT_EQ(c.tls.certPem, "prod cert");
  EXPECT_EQ(c.tls.keyPem, "KEY");
  EXPECT_EQ(c.defaultNamespace, "default");
}

TEST(KubeConfigTest, ErrorsNameTheFileAndWhatIsMissing) {
  testing::TempDir dir;
  write(dir.sub("config"), kTwoContexts);
  try {
    KubeConfig::fromFile(dir.sub("config"), "staging");
    FAIL() << "expected an error";
  } catch (const KubeConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no context named 'staging'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(dir.sub("config")), std::string::npos);
  }
  EXPECT_THROW(KubeConfig::fromFile(dir.sub("missing"), ""), KubeConfigError);
  write(dir.sub("bad"), "clusters: [unclosed");
  EXPECT_THROW(KubeConfig::fromFile(dir.sub("bad"), ""), KubeConfigError);
  // The prod context's CA file does not exist here.
  EXPECT_THROW(KubeConfig::fromFile(dir.sub("config"), "prod"), KubeConfigError);
}

TEST(KubeConfigTest, Base64) {
  EXPECT_EQ(decodeBase64("aGVsbG8="), "hello");
  EXPECT_EQ(decodeBase64("aGVs\nbG8h"), "hello!");
  EXPECT_EQ(decodeBase64("aA=="), "h");
  EXPECT_THROW(decodeBase64("abc"), KubeConfigError);
}

}  // namespace
}  // namespace rayjournal::kube
