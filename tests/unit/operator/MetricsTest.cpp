// The Prometheus text the operator serves, and KubeRay's job metrics rebuilt from status
// (TestEmitRayJobExecutionDuration ported: retry_count is the failed count before the last
// transition).
#include <gtest/gtest.h>

#include "support/SimHarness.h"

#include "operator/OperatorMetrics.h"

namespace rayjournal::operator_ {
namespace {

TEST(MetricsTest, TextFormatWithLabelsAndHistograms) {
  Metrics m;
  m.describe("calls_total", Metrics::Type::Counter, "Calls.");
  m.describe("latency_seconds", Metrics::Type::Histogram, "Latency.", {0.1, 1});
  m.inc("calls_total", {{"verb", "get"}, {"note", "a \"quoted\"\nline"}}, 2);
  m.observe("latency_seconds", {}, 0.05);
  m.observe("latency_seconds", {}, 0.5);
  m.observe("latency_seconds", {}, 5);
  std::string text = m.render();
  EXPECT_NE(text.find("# TYPE calls_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("calls_total{note=\"a \\\"quoted\\\"\\nline\",verb=\"get\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("latency_seconds_bucket{le=\"0.1\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("latency_seconds_bucket{le=\"1\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("latency_seconds_bucket{le=\"+Inf\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("latency_seconds_count 3\n"), std::string::npos);
  EXPECT_THROW(m.inc("undescribed"), std::logic_error);
}

TEST(MetricsTest, KubeRayJobMetricsFromStatus) {
  Metrics m;
  describeOperatorMetrics(m);
  std::map<std::string, runtime::JobSummary> jobs{
      {"ns/done", {"u1", "Complete", "2026-11-30T10:00:00Z", "2026-11-30T10:01:40Z", 1}},
      {"ns/broke", {"u2", "Failed", "2026-11-30T10:00:00Z", "2026-11-30T10:00:30Z", 3}},
      {"ns/busy", {"u3", "Running", "2026-11-30T10:00:00Z", "", 0}}};
  collectJobMetrics(m, jobs);
  std::string text = m.render();
  EXPECT_NE(text.find("kuberay_job_execution_duration_seconds{job_deployment_status=\"Complete\","
                      "name=\"done\",namespace=\"ns\",retry_count=\"1\",uid=\"u1\"} 100\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kuberay_job_execution_duration_seconds{job_deployment_status=\"Failed\","
                      "name=\"broke\",namespace=\"ns\",retry_count=\"2\",uid=\"u2\"} 30\n"),
            std::string::npos);
  EXPECT_EQ(text.find("name=\"busy\",namespace=\"ns\",retry_count"), std::string::npos)
      << "no duration for a running job";
  EXPECT_NE(text.find("kuberay_job_info{name=\"busy\",namespace=\"ns\",uid=\"u3\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("rayjournal_rayjobs{deployment_status=\"Running\"} 1\n"), std::string::npos);
  // A RayJob that is gone loses its series at the next scrape.
  jobs.erase("ns/busy");
  collectJobMetrics(m, jobs);
  EXPECT_EQ(m.render().find("name=\"busy\""), std::string::npos);
}

// KubeRay's Retrying series: one per attempt that went Retrying, retry_count = failed before it,
// the attempt's duration; rebuilt from the journal after a restart. Before, only Complete and
// Failed series existed.
TEST(MetricsTest, ExecutionDurationHasARetryingSeriesPerRetriedAttempt) {
  testing::SimHarness h;
  nlohmann::json job = testing::sampleRayJob("again", "HTTPMode", "FAILED,SUCCEEDED", "5s");
  job["spec"]["backoffLimit"] = 1;
  h.apply(job);
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("again") == "Complete"; }));
  h.restart();
  h.drain();
  Metrics m;
  describeOperatorMetrics(m);
  const auto& projection = *h.projection;
  collectJobMetrics(m, h.stack->jobSummaries(),
                    [&](const std::string& key) { return projection.retriedAttempts(key); });
  std::string text = m.render();
  std::string retrying = "kuberay_job_execution_duration_seconds{job_deployment_status=\"Retrying\","
                         "name=\"again\",namespace=\"default\",retry_count=\"0\"";
  auto at = text.find(retrying);
  ASSERT_NE(at, std::string::npos) << text;
  double seconds = std::stod(text.substr(text.find("} ", at) + 2));
  EXPECT_GE(seconds, 5.0) << "the failed attempt ran its 5 s";
  EXPECT_LT(seconds, 60.0);
  EXPECT_NE(text.find("job_deployment_status=\"Complete\",name=\"again\",namespace=\"default\","
                      "retry_count=\"1\""),
            std::string::npos);
}

// The families KubeRay's Grafana dashboard reads beside kuberay_job_*: kuberay_cluster_* from the
// RayClusters (owner kind, provisioned, creation-to-provisioned seconds from the status, so a
// restart keeps them), and controller-runtime's reconcile counters, reconcile-time histogram and
// workqueue depth per controller. Before, the dashboard's RayCluster and controller panels were
// empty.
TEST(MetricsTest, KubeRaysClusterAndControllerFamiliesAreExported) {
  testing::SimHarness h;
  Metrics m;
  h.onReconcile = describeOperatorMetrics(m);
  h.restart();
  h.apply(testing::sampleRayJob("dash", "HTTPMode", "SUCCEEDED", "1s"));
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("dash") == "Running"; }));
  collectClusterMetrics(m, h.stack->clusterSummaries());
  std::string text = m.render();
  EXPECT_NE(text.find("kuberay_cluster_info{name=\"dash-"), std::string::npos) << text;
  EXPECT_NE(text.find("owner_kind=\"RayJob\""), std::string::npos);
  EXPECT_NE(text.find("kuberay_cluster_condition_provisioned{condition=\"true\",name=\"dash-"), std::string::npos);
  EXPECT_NE(text.find("kuberay_cluster_provisioned_duration_seconds{name=\"dash-"), std::string::npos);
  EXPECT_NE(text.find("controller_runtime_reconcile_total{controller=\"rayjob\",result="), std::string::npos);
  EXPECT_NE(text.find("controller_runtime_reconcile_total{controller=\"raycluster\",result="), std::string::npos);
  EXPECT_NE(text.find("controller_runtime_reconcile_time_seconds_bucket{controller=\"raycluster\",le=\"0.005\"}"),
            std::string::npos);
}

}  // namespace
}  // namespace rayjournal::operator_
