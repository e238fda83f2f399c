// KubeRay's configuration file as platform teams write it: every field read into the setting it
// names, and a file the operator cannot act on refused at start-up with the file, the field and
// the cause (not at the first Pod, where the API server would refuse it cluster by cluster).
#include "operator/OperatorConfig.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace rayjournal::operator_ {
namespace {

const char* kHeader = "apiVersion: config.ray.io/v1alpha1\nkind: Configuration\n";

OperatorConfigParse parse(const std::string& body) {
  return parseOperatorConfig(kHeader + body, "config.yaml");
}

std::string refusal(const std::string& body) { return parse(body).error; }

TEST(OperatorConfigTest, EveryKubeRayFieldIsRead) {
  auto p = parse(R"(metricsAddr: ":9090"
enableLeaderElection: false
leaderElectionNamespace: ray-system
reconcileConcurrency: 4
watchNamespace: team-a,team-b
logFile: /tmp/kuberay.log
logFileEncoder: console
logStdoutEncoder: json
useKubernetesProxy: true
deleteRayJobAfterJobFinishes: true
enableMetrics: true
qps: 50.5
burst: 80
headSidecarContainers:
- {name: fluentbit, image: fluent/fluent-bit:1.9}
workerSidecarContainers:
- {name: proxy, image: envoy:1}
defaultContainerEnvs:
- {name: RAY_enable_open_telemetry, value: "true"}
defaultPodLabels: {team: ml}
defaultPodAnnotations: {prometheus.io/scrape: "true"}
)");
  ASSERT_EQ(p.error, "");
  const OperatorConfig& c = p.config;
  EXPECT_EQ(c.metricsAddr, ":9090");
  EXPECT_EQ(c.enableLeaderElection, false);
  EXPECT_EQ(c.leaderElectionNamespace, "ray-system");
  EXPECT_EQ(c.reconcileConcurrency, 4);
  EXPECT_EQ(c.watchNamespace, "team-a,team-b");
  EXPECT_EQ(c.logFile, "/tmp/kuberay.log");
  EXPECT_EQ(c.logFileEncoder, "console");
  EXPECT_EQ(c.logStdoutEncoder, "json");
  EXPECT_EQ(c.useKubernetesProxy, true);
  EXPECT_EQ(c.deleteRayJobAfterJobFinishes, true);
  EXPECT_EQ(c.qps, 50.5);
  EXPECT_EQ(c.burst, 80);
  EXPECT_EQ(c.podDefaults.headSidecars.get()[0]["name"], "fluentbit");
  EXPECT_EQ(c.podDefaults.workerSidecars.get()[0]["image"], "envoy:1");
  EXPECT_EQ(c.podDefaults.containerEnvs.get()[0]["value"], "true");
  EXPECT_EQ(c.podDefaults.labels.at("team"), "ml");
  EXPECT_EQ(c.podDefaults.annotations.at("prometheus.io/scrape"), "true");
  EXPECT_TRUE(c.warnings.empty());
}

TEST(OperatorConfigTest, AnEmptyConfigurationSetsNothing) {
  auto p = parse("");
  ASSERT_EQ(p.error, "");
  EXPECT_TRUE(p.config.podDefaults.empty());
  EXPECT_FALSE(p.config.metricsAddr);
}

TEST(OperatorConfigTest, UnknownAndIgnoredFieldsAreWarnedByName) {
  auto p = parse("probeAddr: \":8082\"\nenableBatchSchedular: true\n");
  ASSERT_EQ(p.error, "");
  ASSERT_EQ(p.config.warnings.size(), 2u);
  EXPECT_NE(p.config.warnings[0].find("enableBatchSchedular is not a field"), std::string::npos);
  EXPECT_NE(p.config.warnings[1].find("probeAddr"), std::string::npos);
}

TEST(OperatorConfigTest, WrongKindIsRefused) {
  auto p = parseOperatorConfig("apiVersion: ray.io/v1\nkind: RayCluster\n", "config.yaml");
  EXPECT_EQ(p.error, "config.yaml: apiVersion/kind: \"ray.io/v1\"/\"RayCluster\" is not KubeRay's "
                     "config.ray.io/v1alpha1 Configuration");
}

TEST(OperatorConfigTest, NotYamlIsRefused) {
  EXPECT_NE(parseOperatorConfig("a: [1, 2", "c.yaml").error.find("c.yaml: not YAML"), std::string::npos);
}

TEST(OperatorConfigTest, TwoDocumentsAreRefused) {
  EXPECT_EQ(parseOperatorConfig(std::string(kHeader) + "---\n" + kHeader, "c.yaml").error,
            "c.yaml: holds 2 YAML documents, not one");
}

TEST(OperatorConfigTest, QuotedBooleanIsRefused) {
  EXPECT_EQ(refusal("enableLeaderElection: \"yes\"\n"),
            "config.yaml: enableLeaderElection: must be true or false, not a string");
}

TEST(OperatorConfigTest, ConcurrencyOutOfRangeIsRefused) {
  EXPECT_EQ(refusal("reconcileConcurrency: -1\n"),
            "config.yaml: reconcileConcurrency: -1 is outside 0..256");
}

TEST(OperatorConfigTest, UnknownEncoderIsRefused) {
  EXPECT_EQ(refusal("logStdoutEncoder: xml\n"),
            "config.yaml: logStdoutEncoder: \"xml\" is not an encoder (json or console)");
}

TEST(OperatorConfigTest, SidecarWithoutImageIsRefused) {
  EXPECT_EQ(refusal("headSidecarContainers:\n- name: logs\n"),
            "config.yaml: headSidecarContainers[0]: container logs needs an image");
}

TEST(OperatorConfigTest, SidecarNamedTwiceIsRefused) {
  EXPECT_EQ(refusal("workerSidecarContainers:\n- {name: a, image: x}\n- {name: a, image: y}\n"),
            "config.yaml: workerSidecarContainers[1].name: \"a\" is named twice");
}

TEST(OperatorConfigTest, SidecarsNotAListAreRefused) {
  EXPECT_EQ(refusal("headSidecarContainers: {name: a}\n"),
            "config.yaml: headSidecarContainers: must be a list of containers, not a mapping");
}

TEST(OperatorConfigTest, EnvWithoutNameIsRefused) {
  EXPECT_EQ(refusal("defaultContainerEnvs:\n- value: x\n"),
            "config.yaml: defaultContainerEnvs[0]: an environment variable needs a name");
}

TEST(OperatorConfigTest, BadLabelKeyIsRefused) {
  EXPECT_EQ(refusal("defaultPodLabels: {\"-team\": ml}\n"),
            "config.yaml: defaultPodLabels[\"-team\"]: the key is not a qualified name (prefix/name)");
}

TEST(OperatorConfigTest, BadLabelValueIsRefused) {
  EXPECT_EQ(refusal("defaultPodLabels: {team: \"machine learning\"}\n"),
            "config.yaml: defaultPodLabels[\"team\"]: \"machine learning\" is not a label value");
}

TEST(OperatorConfigTest, AnnotationValuesNeedNotBeLabelValues) {
  auto p = parse("defaultPodAnnotations: {example.com/note: \"any text, at all\"}\n");
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.config.podDefaults.annotations.at("example.com/note"), "any text, at all");
}

}  // namespace
}  // namespace rayjournal::operator_
