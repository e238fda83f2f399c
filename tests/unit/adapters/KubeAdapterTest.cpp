// The real Kubernetes adapter's pieces that need no server: kubeconfig loading, paths, the rate
// limiter, and the errors a user sees when the server cannot be reached.
#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <fstream>

#include "adapters/http/HttpClient.h"
#include "adapters/kube/KubeConfig.h"
#include "adapters/kube/KubeRestClient.h"
#include "adapters/kube/RateLimiter.h"
#include "adapters/ray/RayHttpClient.h"
#include "support/TempDir.h"

namespace rayjournal::kube {
namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

// A port nothing listens on: bound, then released.
int closedPort() {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor a(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
  int port = a.local_endpoint().port();
  a.close();
  return port;
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

TEST(KubeRestClientTest, ResourcePaths) {
  EXPECT_EQ(resourcePath("RayJob", "ns1", "a", "status"),
            "/apis/ray.io/v1/namespaces/ns1/rayjobs/a/status");
  EXPECT_EQ(resourcePath("Pod", ""), "/api/v1/pods");
  EXPECT_EQ(resourcePath("Job", "x", "j"), "/apis/batch/v1/namespaces/x/jobs/j");
  EXPECT_EQ(resourcePath("Lease", "x", "l"), "/apis/coordination.k8s.io/v1/namespaces/x/leases/l");
  EXPECT_THROW(resourcePath("Gizmo", "x"), ApiError);
}

TEST(KubeRestClientTest, UnreachableServerIsAnErrorNamingTheServer) {
  KubeConfig c;
  c.server = "https://127.0.0.1:" + std::to_string(closedPort());
  c.tls.insecureSkipVerify = true;
  KubeRestOptions o;
  o.timeout = std::chrono::milliseconds(2000);
  KubeRestClient client(c, o);
  try {
    client.create("RayJob", {{"metadata", {{"name", "a"}, {"namespace", "n"}}}});
    FAIL() << "expected an error";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code(), 0);
    EXPECT_EQ(e.reason(), "Unreachable");
    EXPECT_NE(std::string(e.what()).find(c.server), std::string::npos) << e.what();
  }
}

TEST(RayHttpClientTest, UnreachableDashboardIsARayError) {
  ray::RayHttpOptions o;
  o.dashboardOverride = "127.0.0.1:" + std::to_string(closedPort());
  o.timeout = std::chrono::milliseconds(2000);
  ray::RayHttpClient client(o);
  try {
    client.getJob("svc.ns.svc.cluster.local:8265", "id");
    FAIL() << "expected an error";
  } catch (const ray::RayError& e) {
    EXPECT_NE(std::string(e.what()).find(o.dashboardOverride), std::string::npos) << e.what();
  }
}

TEST(RayHttpClientTest, ServiceProxyPath) {
  EXPECT_EQ(ray::serviceProxyPath("c-head-svc.team-a.svc.cluster.local:8265", "/api/jobs/x"),
            "/api/v1/namespaces/team-a/services/c-head-svc:8265/proxy/api/jobs/x");
  EXPECT_EQ(ray::serviceProxyPath("http://c-head-svc.ns.svc:9000", "/api/version"),
            "/api/v1/namespaces/ns/services/c-head-svc:9000/proxy/api/version");
  EXPECT_THROW(ray::serviceProxyPath("127.0.0.1:8265", "/api/version"), ray::RayError);
}

TEST(HttpClientTest, RejectsAnUnusableTlsConfiguration) {
  http::TlsConfig tls;
  tls.caPem = "not a certificate";
  EXPECT_THROW(http::HttpClient("https://127.0.0.1:1", tls, std::chrono::seconds(1)),
               http::HttpError);
}

TEST(RateLimiterTest, BurstThenQps) {
  RateLimiter limiter(100, 5);  // 100/s: one token per 10 ms
  for (int i = 0; i < 5; ++i) limiter.acquire();
  EXPECT_GT(limiter.wouldWait().count(), 0) << "the burst is spent";
  auto began = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) limiter.acquire();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  EXPECT_GE(seconds, 0.08) << "10 tokens at 100/s take about 0.1 s";
  RateLimiter unlimited(0, 1);
  for (int i = 0; i < 1000; ++i) unlimited.acquire();
  EXPECT_EQ(unlimited.wouldWait().count(), 0);
}

}  // namespace
}  // namespace rayjournal::kube
