// The Ray Jobs HTTP client without a dashboard: errors name the address, service-proxy paths.
#include "adapters/ray/RayHttpClient.h"

#include <gtest/gtest.h>

#include "support/ClosedPort.h"

namespace rayjournal::ray {
namespace {

using testing::closedPort;

TEST(RayHttpClientTest, UnreachableDashboardIsARayError) {
  RayHttpOptions o;
  o.dashboardOverride = "127.0.0.1:" + std::to_string(closedPort());
  o.timeout = std::chrono::milliseconds(2000);
  RayHttpClient client(o);
  try {
    client.getJob("svc.ns.svc.cluster.local:8265", "id");
    FAIL() << "expected an error";
  } catch (const RayError& e) {
    EXPECT_NE(std::string(e.what()).find(o.dashboardOverride), std::string::npos) << e.what();
  }
}

// Every RayCluster has a dashboard of its own, called while its RayJob runs and never again: a
// client (and its keep-alive sockets) was kept for each one the operator ever called.
TEST(RayHttpClientTest, TheClientsOfFinishedClustersDashboardsAreNotKeptForever) {
  RayHttpOptions o;
  o.timeout = std::chrono::milliseconds(2000);
  o.maxDashboardClients = 3;
  RayHttpClient client(o);
  const std::string unreachable = "127.0.0.1:" + std::to_string(closedPort());
  for (int cluster = 0; cluster < 10; ++cluster) {
    // Distinct addresses of one unreachable place: every call fails fast, as for a gone cluster.
    const std::string dashboard = "http://" + unreachable + "/c" + std::to_string(cluster);
    EXPECT_THROW(client.getJob(dashboard, "id"), RayError);
    EXPECT_LE(client.dashboardClients(), 3u);
  }
  EXPECT_EQ(client.dashboardClients(), 3u);
}

TEST(RayHttpClientTest, ServiceProxyPath) {
  EXPECT_EQ(serviceProxyPath("c-head-svc.team-a.svc.cluster.local:8265", "/api/jobs/x"),
            "/api/v1/namespaces/team-a/services/c-head-svc:8265/proxy/api/jobs/x");
  EXPECT_EQ(serviceProxyPath("http://c-head-svc.ns.svc:9000", "/api/version"),
            "/api/v1/namespaces/ns/services/c-head-svc:9000/proxy/api/version");
  EXPECT_THROW(serviceProxyPath("127.0.0.1:8265", "/api/version"), RayError);
}

}  // namespace
}  // namespace rayjournal::ray
