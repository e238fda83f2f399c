// KubeRay's operator settings (environment variables and feature gates) as a user sees them in
// the objects the operator writes, on the simulated cluster.
#include <gtest/gtest.h>

#include "support/SimHarness.h"

namespace rayjournal::testing {
namespace {

json withWorkers(json job) { return withWorkerGroup(std::move(job)); }

json pod(SimHarness& h, const std::string& cluster, const std::string& nodeType) {
  auto pods =
      h.kube.list("Pod", "default", {{"ray.io/cluster", cluster}, {"ray.io/node-type", nodeType}});
  return pods.empty() ? json() : pods[0];
}

// ENABLE_LOGIN_SHELL=true: the submitter runs `bash -cel`, the Ray and init containers
// `bash -cl` (KubeRay's GetContainerCommand). Before, the setting was not read.
TEST(OperatorSettingsScenario, LoginShellReachesTheSubmitterAndTheRayContainers) {
  SimHarness h;
  h.config.loginShell = true;
  h.restart();
  h.apply(withWorkers(sampleRayJob("login")));
  ASSERT_TRUE(h.runUntil([&] { return h.kube.get("Job", "default", "login").has_value(); }));
  json submitter = *h.kube.get("Job", "default", "login");
  EXPECT_EQ(submitter["spec"]["template"]["spec"]["containers"][0]["command"],
            json::array({"/bin/bash", "-cel", "--"}));
  json worker = pod(h, h.clusterOf("login"), "worker");
  ASSERT_FALSE(worker.is_null());
  EXPECT_EQ(worker["spec"]["containers"][0]["command"], json::array({"/bin/bash", "-cl", "--"}));
  EXPECT_EQ(worker["spec"]["initContainers"][0]["command"],
            json::array({"/bin/bash", "-cl", "--"}));
  json head = pod(h, h.clusterOf("login"), "head");
  EXPECT_EQ(head["spec"]["containers"][0]["command"], json::array({"/bin/bash", "-cl", "--"}));
}

TEST(OperatorSettingsScenario, ByDefaultTheShellIsNotALoginShell) {
  SimHarness h;
  h.apply(withWorkers(sampleRayJob("plain")));
  ASSERT_TRUE(h.runUntil([&] { return h.kube.get("Job", "default", "plain").has_value(); }));
  json submitter = *h.kube.get("Job", "default", "plain");
  EXPECT_EQ(submitter["spec"]["template"]["spec"]["containers"][0]["command"],
            json::array({"/bin/bash", "-ce", "--"}));
  json worker = pod(h, h.clusterOf("plain"), "worker");
  EXPECT_EQ(worker["spec"]["containers"][0]["command"], json::array({"/bin/bash", "-c", "--"}));
  EXPECT_EQ(worker["spec"]["initContainers"][0]["name"], "wait-gcs-ready");
  EXPECT_TRUE(worker["spec"]["containers"][0].contains("readinessProbe"));
}

// ENABLE_PROBES_INJECTION=false and ENABLE_INIT_CONTAINER_INJECTION=false: no probes, no
// wait-gcs-ready; the RayJob still completes (the simulated kubelet needs neither).
TEST(OperatorSettingsScenario, ProbeAndInitContainerInjectionCanBeTurnedOff) {
  SimHarness h;
  h.config.injectProbes = false;
  h.config.injectWaitGcsReady = false;
  h.restart();
  h.apply(withWorkers(sampleRayJob("bare", "HTTPMode")));
  ASSERT_TRUE(h.runUntil([&] { return !pod(h, h.clusterOf("bare"), "worker").is_null(); }));
  json worker = pod(h, h.clusterOf("bare"), "worker");
  json head = pod(h, h.clusterOf("bare"), "head");
  EXPECT_FALSE(worker["spec"].contains("initContainers")) << worker["spec"].dump();
  for (const json& p : {worker, head}) {
    EXPECT_FALSE(p["spec"]["containers"][0].contains("readinessProbe"));
    EXPECT_FALSE(p["spec"]["containers"][0].contains("livenessProbe"));
  }
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("bare") == "Complete"; }));
}

// RayClusterStatusConditions=false: the RayCluster's status has no conditions. The gate was
// parsed but the RayCluster reconciler dropped it and always wrote them.
TEST(OperatorSettingsScenario, StatusConditionsGateOffWritesNoClusterConditions) {
  SimHarness h;
  h.config.gates.rayClusterStatusConditions = false;
  h.restart();
  h.apply(sampleRayJob("nocond", "HTTPMode"));
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("nocond") == "Running"; }));
  json cluster = *h.kube.get("RayCluster", "default", h.clusterOf("nocond"));
  EXPECT_EQ(cluster["status"].value("state", ""), "ready");
  EXPECT_FALSE(cluster["status"].contains("conditions")) << cluster["status"].dump();
}

TEST(OperatorSettingsScenario, StatusConditionsGateOnWritesClusterConditions) {
  SimHarness h;
  h.apply(sampleRayJob("cond", "HTTPMode"));
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("cond") == "Running"; }));
  json cluster = *h.kube.get("RayCluster", "default", h.clusterOf("cond"));
  EXPECT_FALSE(cluster["status"].value("conditions", json::array()).empty());
}

json withTokenAuth(json job, const std::string& secretName = "") {
  json& spec = job["spec"]["rayClusterSpec"];
  spec["rayVersion"] = "2.53.0";
  spec["authOptions"] = {{"mode", "token"}};
  if (!secretName.empty()) spec["authOptions"]["secretName"] = secretName;
  return withWorkers(std::move(job));
}

std::string envSecret(const json& container) {
  std::string mode, secret;
  for (const auto& e : container.value("env", json::array())) {
    if (e["name"] == "RAY_AUTH_MODE") mode = e.value("value", "");
    if (e["name"] == "RAY_AUTH_TOKEN")
      secret = e["valueFrom"]["secretKeyRef"]["name"].get<std::string>() + "/" +
               e["valueFrom"]["secretKeyRef"]["key"].get<std::string>();
  }
  return mode + " " + secret;
}

// Ray token auth (rayClusterSpec.authOptions.mode: token), in every mode: the operator creates
// the cluster's Secret with a random auth_token (never journaled), the Ray containers, the
// wait-gcs-ready init container and the submitter read it through RAY_AUTH_MODE/RAY_AUTH_TOKEN,
// and the operator's own dashboard calls carry it (the simulated Ray answers 401 without it).
// Before, no Secret was made and Ray refused every call.
TEST(OperatorSettingsScenario, TokenAuthInEveryMode) {
  for (const char* mode : {"K8sJobMode", "HTTPMode", "SidecarMode"}) {
    SimHarness h;
    h.apply(withTokenAuth(sampleRayJob("tok", mode)));
    ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("tok") == "Complete"; })) << mode;
    const std::string cluster = h.clusterOf("tok");
    auto secret = h.kube.get("Secret", "default", cluster);
    ASSERT_TRUE(secret.has_value()) << mode;
    std::string token = (*secret)["stringData"]["auth_token"];
    EXPECT_EQ(token.size(), 44u) << "32 random bytes, base64";
    EXPECT_EQ((*secret)["metadata"]["ownerReferences"][0]["kind"], "RayCluster");
    const std::string expected = "token " + cluster + "/auth_token";
    json head = pod(h, cluster, "head"), worker = pod(h, cluster, "worker");
    EXPECT_EQ(envSecret(head["spec"]["containers"][0]), expected) << mode;
    EXPECT_EQ(envSecret(worker["spec"]["containers"][0]), expected);
    EXPECT_EQ(envSecret(worker["spec"]["initContainers"][0]), expected);
    if (std::string(mode) == "K8sJobMode") {
      EXPECT_EQ(envSecret((*h.kube.get("Job", "default", "tok"))["spec"]["template"]["spec"]
                                                                 ["containers"][0]),
                expected);
    }
    if (std::string(mode) == "SidecarMode") {
      EXPECT_EQ(envSecret(head["spec"]["containers"].back()), expected);
    }
    for (const auto& r : h.records())
      EXPECT_EQ(r.body.find(token), std::string::npos) << "the token is in the journal";
  }
}

// authOptions.secretName: the user's Secret is used and none is created.
TEST(OperatorSettingsScenario, TokenAuthWithTheUsersSecret) {
  SimHarness h;
  h.kube.create("Secret", {{"apiVersion", "v1"},
                           {"kind", "Secret"},
                           {"metadata", {{"name", "my-token"}, {"namespace", "default"}}},
                           {"data", {{"auth_token", "c2VjcmV0LXRva2Vu"}}}});  // secret-token
  h.apply(withTokenAuth(sampleRayJob("own", "HTTPMode"), "my-token"));
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("own") == "Complete"; }));
  EXPECT_FALSE(h.kube.get("Secret", "default", h.clusterOf("own")).has_value());
  EXPECT_EQ(envSecret(pod(h, h.clusterOf("own"), "head")["spec"]["containers"][0]),
            "token my-token/auth_token");
}

json sidecarJob(const std::string& name, const std::string& submitter) {
  json job = sampleRayJob(name, "SidecarMode", "SUCCEEDED", "5s");
  job["metadata"]["annotations"]["rayjournal.io/sim-submitter"] = submitter;
  return job;
}

json submitterStatus(SimHarness& h, const std::string& job) {
  json head = pod(h, h.clusterOf(job), "head");
  for (const auto& cs : head["status"].value("containerStatuses", json::array()))
    if (cs["name"] == "ray-job-submitter") return cs;
  return json();
}

// --feature-gates SidecarSubmitterRestart=true: the sidecar restarts on failure (container
// restartPolicy OnFailure), checks `ray job status` before it submits, and a sidecar that failed
// once carries the RayJob to Complete with one submission. Before, the gate was refused.
TEST(OperatorSettingsScenario, SidecarSubmitterRestartRestartsAFailedSidecar) {
  SimHarness h;
  h.config.gates.sidecarSubmitterRestart = true;
  h.restart();
  h.apply(sidecarJob("again", "fail-once"));
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("again") == "Complete"; }));
  EXPECT_EQ(submitterStatus(h, "again").value("restartCount", 0), 1);
  EXPECT_EQ(h.ray.submissions(), 1u);
  json cluster = *h.kube.get("RayCluster", "default", h.clusterOf("again"));
  json sidecar = cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"].back();
  EXPECT_EQ(sidecar["restartPolicy"], "OnFailure");
  EXPECT_NE(sidecar["args"][0].get<std::string>().find("if ! ray job status"), std::string::npos);
}

// The restart limit (KubeRay's checkIsRestartCountExceeded with its default 2): a sidecar that
// keeps failing fails the attempt with KubeRay's message.
TEST(OperatorSettingsScenario, SidecarSubmitterRestartGivesUpAfterTheRestartLimit) {
  SimHarness h;
  h.config.gates.sidecarSubmitterRestart = true;
  h.restart();
  h.apply(sidecarJob("broken", "fail"));
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("broken") == "Failed"; }))
      << submitterStatus(h, "broken").dump();
  EXPECT_EQ(h.rayjob("broken")["status"]["reason"], "SubmissionFailed");
  EXPECT_EQ(h.rayjob("broken")["status"]["message"],
            "Ray head pod submitter container ray-job-submitter terminated after exceeding the "
            "maximum restart count");
  EXPECT_EQ(submitterStatus(h, "broken").value("restartCount", 0), 2);
}

// Without the gate (KubeRay's default) the first failure of the sidecar fails the attempt.
TEST(OperatorSettingsScenario, WithoutTheGateASidecarFailureFailsTheAttempt) {
  SimHarness h;
  h.apply(sidecarJob("once", "fail-once"));
  ASSERT_TRUE(h.runUntil([&] { return h.deploymentStatus("once") == "Failed"; }));
  EXPECT_EQ(h.rayjob("once")["status"]["reason"], "SubmissionFailed");
  EXPECT_EQ(h.rayjob("once")["status"]["message"],
            "Ray head pod container ray-job-submitter terminated with exit code 1: Error");
  EXPECT_EQ(submitterStatus(h, "once").value("restartCount", 0), 0);
}

// For one Running RayJob, from submission to Complete: the shortest time (simulated ms) from an
// answer that named its job to the next time the operator asked, how often it asked, and whether
// the RayJob ended Complete with its job SUCCEEDED. (An answer that the job is unknown is
// followed by the submission and a new question at once, as it should be.)
struct RunningAsks {
  int64_t shortestGapMs = INT64_MAX;
  int asks = 0;
  bool succeeded = false;
};

RunningAsks asksWhileRunning(int64_t reuseMs) {
  SimHarness h;
  h.config.rayAnswerReuseMs = reuseMs;
  h.restart();
  h.ray.setPendingMs(400);
  RunningAsks asks;
  std::optional<int64_t> knownAt;
  h.rayPort.onGet = [&](const std::string&, bool known) {
    if (h.deploymentStatus("asks") != "Running") return;
    ++asks.asks;
    if (knownAt) asks.shortestGapMs = std::min(asks.shortestGapMs, h.clock.nowMs() - *knownAt);
    knownAt = known ? std::optional<int64_t>(h.clock.nowMs()) : std::nullopt;
  };
  h.apply(sampleRayJob("asks", "HTTPMode", "SUCCEEDED", "5s"));
  h.runUntil([&] { return h.deploymentStatus("asks") == "Complete"; });
  asks.succeeded = h.deploymentStatus("asks") == "Complete" &&
                   h.status("asks").value("jobStatus", "") == "SUCCEEDED";
  return asks;
}

// The echo of the status write an answer caused decided from that answer instead of asking the
// dashboard again: Ray is asked at most once a second per Running RayJob, and the RayJob still
// ends Complete with its job SUCCEEDED. With the reuse off, the echo asks again at once
// (what KubeRay does), which shows the test can tell the two apart.
TEST(OperatorSettingsScenario, ARunningRayJobsDashboardIsAskedAtMostOncePerReuseWindow) {
  RunningAsks reused = asksWhileRunning(1000);
  RunningAsks everyTime = asksWhileRunning(0);
  ASSERT_TRUE(reused.succeeded);
  ASSERT_TRUE(everyTime.succeeded);
  ASSERT_GE(reused.asks, 2);
  EXPECT_GE(reused.shortestGapMs, 1000);
  EXPECT_LT(everyTime.shortestGapMs, 1000);
  EXPECT_LT(reused.asks, everyTime.asks);
}

}  // namespace
}  // namespace rayjournal::testing
