// Validation rules V1-V12 of KubeRay's RayJob (reference section 2): the message of each rule.
#include "controller/rayjob/Validate.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/MinimalRayJob.h"

#include "controller/rayjob/RayJob.h"

namespace rayjournal::controller {
namespace {

using nlohmann::json;

json validRayJob() { return testing::minimalRayJob(); }

std::string invalid(json doc) {
  auto e = validateRayJob(parseRayJob(doc));
  return e ? e->message : "";
}

// A spec field of the wrong type is a validation failure naming the field, the expected type
// and the value, never a RayJob left without a status; integers are neither truncated nor
// wrapped.
TEST(ValidateTest, WronglyTypedSpecFieldsAreNamedWithTheExpectedType) {
  struct Case {
    const char* field;
    json value;
    const char* says;
  };
  for (const Case& c : {Case{"backoffLimit", "three", "spec.backoffLimit: must be an int32 integer, not the string \"three\""},
                        Case{"backoffLimit", 2147483648u, "spec.backoffLimit: must be an int32 integer (out of range), not 2147483648"},
                        Case{"backoffLimit", 1.5, "spec.backoffLimit: must be an int32 integer, not 1.5"},
                        Case{"activeDeadlineSeconds", -2147483649LL, "(out of range)"},
                        Case{"shutdownAfterJobFinishes", "yes", "spec.shutdownAfterJobFinishes: must be true or false"},
                        Case{"entrypoint", 7, "spec.entrypoint: must be a string, not 7"},
                        Case{"entrypointNumCpus", "1", "spec.entrypointNumCpus: must be a number"},
                        Case{"clusterSelector", json{{"a", 1}}, "spec.clusterSelector: must be a map of strings"}}) {
    json doc = validRayJob();
    doc["spec"][c.field] = c.value;
    RayJob job;
    ASSERT_NO_THROW(job = parseRayJob(doc)) << c.field;
    auto e = validateRayJob(job);
    ASSERT_TRUE(e) << c.field << " = " << c.value.dump() << " was accepted";
    EXPECT_EQ(e->reason, "InvalidRayJobSpec");
    EXPECT_NE(e->message.find(c.says), std::string::npos) << e->message;
  }
  json doc = validRayJob();
  doc["spec"]["backoffLimit"] = 2147483647;
  EXPECT_EQ(parseRayJob(doc).spec.backoffLimit, 2147483647);
  EXPECT_FALSE(validateRayJob(parseRayJob(doc)));
}

// KubeRay's message texts, word for word (alerting rules match status.message).
constexpr const char* kInvalid = "The RayJob spec is invalid: ";

TEST(ValidateTest, V1_NameLengthAndDns1035) {
  json doc = validRayJob();
  doc["metadata"]["name"] = std::string(48, 'a');
  EXPECT_EQ(invalid(doc),
            "The RayJob metadata is invalid: RayJob name should be no more than 47 characters");
  doc["metadata"]["name"] = "Upper_Case";
  EXPECT_EQ(invalid(doc).rfind("The RayJob metadata is invalid: RayJob name should be a valid "
                               "DNS1035 label: [a DNS-1035 label must consist of lower case",
                               0),
            0u)
      << invalid(doc);
  doc["metadata"]["name"] = std::string(47, 'a');
  EXPECT_EQ(invalid(doc), "");
}

TEST(ValidateTest, V2_SuspendRequiresShutdown) {
  json doc = validRayJob();
  doc["spec"]["suspend"] = true;
  EXPECT_EQ(invalid(doc), std::string(kInvalid) +
                              "a RayJob with shutdownAfterJobFinishes set to false is not "
                              "allowed to be suspended");
  doc["spec"]["shutdownAfterJobFinishes"] = true;
  EXPECT_EQ(invalid(doc), "");
}

// ttlSecondsAfterFinished > 0 needs shutdownAfterJobFinishes whatever the deletionStrategy
// (rayjournal once let a deletionStrategy excuse it).
TEST(ValidateTest, V3_TtlRules) {
  json doc = validRayJob();
  doc["spec"]["ttlSecondsAfterFinished"] = -1;
  EXPECT_EQ(invalid(doc), std::string(kInvalid) + "TTLSecondsAfterFinished must be a non-negative integer");
  doc["spec"]["ttlSecondsAfterFinished"] = 10;
  const std::string noShutdown = std::string(kInvalid) +
                                 "a RayJob with shutdownAfterJobFinishes set to false cannot have "
                                 "TTLSecondsAfterFinished";
  EXPECT_EQ(invalid(doc), noShutdown);
  doc["spec"]["deletionStrategy"] = {{"onSuccess", {{"policy", "DeleteCluster"}}},
                                     {"onFailure", {{"policy", "DeleteCluster"}}}};
  EXPECT_EQ(invalid(doc), noShutdown) << "a deletionStrategy does not excuse it";
}

TEST(ValidateTest, V4_DeletionStrategy) {
  json doc = validRayJob();
  doc["spec"]["deletionStrategy"] = json::object();
  EXPECT_EQ(invalid(doc), std::string(kInvalid) +
                              "DeletionStrategy requires either BOTH onSuccess and onFailure, OR "
                              "the deletionRules field (cannot be empty)");
  doc["spec"]["deletionStrategy"] = {{"onSuccess", {{"policy", "DeleteCluster"}}}};
  EXPECT_EQ(invalid(doc),
            "both DeletionStrategy.OnSuccess and DeletionStrategy.OnFailure must be set when using "
            "the legacy deletion policy fields of DeletionStrategy");
  doc["spec"]["deletionStrategy"]["onFailure"] = {{"policy", "DeleteNone"}};
  doc["spec"]["shutdownAfterJobFinishes"] = true;
  EXPECT_EQ(invalid(doc), std::string(kInvalid) +
                              "shutdownAfterJobFinshes is set to 'true' while deletion policy is "
                              "'DeleteNone'");
  doc["spec"]["shutdownAfterJobFinishes"] = false;
  doc["spec"]["deletionStrategy"] = {
      {"deletionRules",
       json::array({{{"policy", "DeleteSelf"},
                     {"condition", {{"jobStatus", "SUCCEEDED"}, {"ttlSeconds", 1}}}},
                    {{"policy", "DeleteCluster"},
                     {"condition", {{"jobStatus", "SUCCEEDED"}, {"ttlSeconds", 5}}}},
                    {{"policy", "DeleteCluster"},
                     {"condition", {{"jobStatus", "SUCCEEDED"}, {"ttlSeconds", 6}}}},
                    {{"policy", "DeleteSelf"}, {"condition", {{"ttlSeconds", 6}}}}})}};
  EXPECT_EQ(invalid(doc),
            "deletionRules[2]: duplicate rule for DeletionPolicyType 'DeleteCluster' and JobStatus "
            "'SUCCEEDED'\n"
            "deletionRules[3]: exactly one of JobStatus and JobDeploymentStatus must be set\n"
            "for JobStatus 'SUCCEEDED': DeleteSelf TTL (1) must be >= DeleteCluster TTL (5)")
      << "every problem, joined as Go's errors.Join";
  doc["spec"]["deletionStrategy"]["deletionRules"].erase(3);
  doc["spec"]["deletionStrategy"]["deletionRules"].erase(2);
  doc["spec"]["deletionStrategy"]["deletionRules"][0]["condition"]["ttlSeconds"] = 10;
  EXPECT_EQ(invalid(doc), "");
  doc["spec"]["shutdownAfterJobFinishes"] = true;
  EXPECT_EQ(invalid(doc), std::string(kInvalid) +
                              "spec.shutdownAfterJobFinishes and spec.deletionStrategy."
                              "deletionRules are mutually exclusive");
}

TEST(ValidateTest, V5_V6_ClusterSelectorRules) {
  json doc = validRayJob();
  doc["spec"].erase("rayClusterSpec");
  EXPECT_EQ(invalid(doc), std::string(kInvalid) + "one of RayClusterSpec or ClusterSelector must be set");
  doc["spec"]["clusterSelector"] = {{"ray.io/cluster", ""}};
  EXPECT_EQ(invalid(doc), "cluster name in ClusterSelector should not be empty");
  doc["spec"]["clusterSelector"] = {{"ray.io/cluster", "shared"}};
  EXPECT_EQ(invalid(doc), "");
  doc["spec"]["backoffLimit"] = 1;
  EXPECT_EQ(invalid(doc), std::string(kInvalid) + "BackoffLimit is incompatible with ClusterSelector mode");
  doc["spec"]["backoffLimit"] = 0;
  doc["spec"]["suspend"] = true;
  doc["spec"]["shutdownAfterJobFinishes"] = true;
  EXPECT_EQ(invalid(doc), std::string(kInvalid) +
                              "the ClusterSelector mode doesn't support the suspend operation");
}

// submitterConfig of any shape is refused in SidecarMode (an empty one once passed).
TEST(ValidateTest, V7_V8_ModeRules) {
  json doc = validRayJob();
  doc["spec"]["submissionMode"] = "InteractiveMode";
  doc["spec"]["backoffLimit"] = 2;
  EXPECT_EQ(invalid(doc), std::string(kInvalid) + "BackoffLimit is incompatible with InteractiveMode");
  doc = validRayJob();
  doc["spec"]["submissionMode"] = "SidecarMode";
  for (json config : {json{{"backoffLimit", 3}}, json::object()}) {
    doc["spec"]["submitterConfig"] = config;
    EXPECT_EQ(invalid(doc), "Currently, SidecarMode doesn't support SubmitterConfig") << config;
  }
  doc["spec"].erase("submitterConfig");
  doc["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["restartPolicy"] = "Always";
  EXPECT_EQ(invalid(doc), "restartPolicy for head Pod should be Never or unset when using SidecarMode");
}

TEST(ValidateTest, V9_ClusterSpec) {
  json doc = validRayJob();
  doc["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"] = json::array();
  EXPECT_EQ(invalid(doc), std::string(kInvalid) + "headGroupSpec should have at least one container");
  doc = validRayJob();
  json worker = {{"groupName", "g"}, {"minReplicas", 5}, {"maxReplicas", 1}};
  doc["spec"]["rayClusterSpec"]["workerGroupSpecs"] = json::array({worker});
  EXPECT_EQ(invalid(doc), std::string(kInvalid) + "workerGroupSpec should have at least one container");
  worker["template"] = {{"spec", {{"containers", json::array({{{"name", "w"}}})}}}};
  doc["spec"]["rayClusterSpec"]["workerGroupSpecs"] = json::array({worker});
  EXPECT_EQ(invalid(doc), std::string(kInvalid) + "worker group g has minReplicas 5 greater than maxReplicas 1");
}

// runtimeEnvYAML must be YAML whose value is a mapping (a list once passed and was submitted).
TEST(ValidateTest, V10_V11_V12) {
  json doc = validRayJob();
  doc["spec"]["runtimeEnvYAML"] = "a: [unclosed";
  EXPECT_EQ(invalid(doc).rfind("failed to unmarshal RuntimeEnvYAML: a: [unclosed: ", 0), 0u);
  doc["spec"]["runtimeEnvYAML"] = "- pip\n- numpy\n";
  EXPECT_EQ(invalid(doc),
            "failed to unmarshal RuntimeEnvYAML: - pip\n- numpy\n: error unmarshaling JSON: while "
            "decoding JSON: json: cannot unmarshal array into Go value of type "
            "utiltypes.RuntimeEnvType");
  doc["spec"]["runtimeEnvYAML"] = "pip: [numpy]\n";
  EXPECT_EQ(invalid(doc), "");
  doc = validRayJob();
  doc["spec"]["activeDeadlineSeconds"] = 0;
  EXPECT_EQ(invalid(doc), std::string(kInvalid) + "activeDeadlineSeconds must be a positive integer");
  doc = validRayJob();
  doc["spec"]["backoffLimit"] = -1;
  EXPECT_EQ(invalid(doc), std::string(kInvalid) + "backoffLimit must be a positive integer");
  doc = validRayJob();
  doc["status"] = {{"jobDeploymentStatus", "Waiting"}};
  auto e = validateRayJob(parseRayJob(doc));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->reason, "InvalidRayJobStatus");
  EXPECT_EQ(e->message,
            "The RayJob status is invalid: JobDeploymentStatus cannot be `Waiting` when "
            "SubmissionMode is not InteractiveMode");
}

// The rest of KubeRay's ValidateRayClusterSpec, each rule with its message. Before, every one of
// these specs was accepted and its RayCluster created.
TEST(ValidateTest, V9_RayClusterSpecRulesAsKubeRays) {
  auto with = [](auto edit) {
    json doc = validRayJob();
    edit(doc["spec"]["rayClusterSpec"], doc);
    return invalid(doc);
  };
  const std::string p = kInvalid;
  auto headEnv = [](json& c, const char* name, const char* value) {
    c["headGroupSpec"]["template"]["spec"]["containers"][0]["env"].push_back(
        {{"name", name}, {"value", value}});
  };
  EXPECT_EQ(with([](json& c, json&) {
              c["headGroupSpec"]["rayStartParams"] = {{"num-cpus", "1"}};
              c["headGroupSpec"]["resources"] = {{"CPU", "1"}};
            }),
            p + "resource fields should not be set in both rayStartParams and Resources for Head "
                "group; please use only one");
  EXPECT_EQ(with([](json& c, json&) { c["headGroupSpec"]["rayStartParams"] = {{"labels", "a=b"}}; }),
            p + "rayStartParams['labels'] is not supported for Head group; please use the "
                "top-level Labels field instead");
  EXPECT_EQ(with([&](json& c, json&) { headEnv(c, "RAY_REDIS_ADDRESS", "redis:6379"); }),
            p + "RAY_REDIS_ADDRESS is set which implicitly enables GCS fault tolerance, but "
                "GcsFaultToleranceOptions is not set. Please set GcsFaultToleranceOptions to "
                "enable GCS fault tolerance");
  EXPECT_EQ(with([](json& c, json& doc) {
              c["gcsFaultToleranceOptions"] = {{"redisAddress", "redis:6379"}};
              doc["metadata"]["annotations"]["ray.io/ft-enabled"] = "true";
            }),
            p + "ray.io/ft-enabled annotation and GcsFaultToleranceOptions are both set. Please "
                "use only GcsFaultToleranceOptions to configure GCS fault tolerance");
  EXPECT_EQ(with([](json& c, json&) {
              c["gcsFaultToleranceOptions"] = {{"redisAddress", "redis:6379"}};
              c["headGroupSpec"]["rayStartParams"] = {{"redis-password", "x"}};
            }),
            p + "cannot set `redis-password` in rayStartParams when GcsFaultToleranceOptions is "
                "enabled - use GcsFaultToleranceOptions.RedisPassword instead");
  EXPECT_EQ(with([&](json& c, json&) { headEnv(c, "RAY_enable_autoscaler_v2", "true"); }),
            p + "environment variable RAY_enable_autoscaler_v2 cannot be set to 'true' when "
                "enableInTreeAutoscaling is false. Please set enableInTreeAutoscaling: true to use "
                "autoscaler v2");
  EXPECT_EQ(with([](json& c, json&) {
              c["authOptions"] = {{"mode", "token"}};
              c["rayVersion"] = "2.46.0";
            }),
            p + "authOptions.mode is 'token' but minimum Ray version is 2.52.0, got 2.46.0");
  EXPECT_EQ(with([](json& c, json&) { c["authOptions"] = {{"mode", "token"}}; }),
            p + "authOptions.mode is 'token' but RayVersion was not specified. Ray version 2.52.0 "
                "or later is required");
  json worker = {{"groupName", "g"},
                 {"minReplicas", 0},
                 {"maxReplicas", 1},
                 {"idleTimeoutSeconds", 60},
                 {"template", {{"spec", {{"containers", json::array({{{"name", "w"}}})}}}}}};
  EXPECT_EQ(with([&](json& c, json&) { c["workerGroupSpecs"] = json::array({worker}); }),
            p + "worker group g: idleTimeoutSeconds is set, but autoscaler v2 is not enabled. "
                "Please set .spec.autoscalerOptions.version to 'v2' (or set "
                "RAY_enable_autoscaler_v2 environment variable to 'true' in the head pod if using "
                "KubeRay < 1.4.0)");
  worker.erase("idleTimeoutSeconds");
  worker["suspend"] = true;
  EXPECT_EQ(with([&](json& c, json&) {
              c["workerGroupSpecs"] = json::array({worker});
              c["enableInTreeAutoscaling"] = true;
            }),
            p + "worker group g cannot be suspended with Autoscaler enabled");
  EXPECT_EQ(with([](json& c, json&) {
              c["authOptions"] = {{"mode", "token"}};
              c["rayVersion"] = "2.52.1";
            }),
            "")
      << "a valid token-auth cluster";
}

// --feature-gates RayJobDeletionPolicy=false refuses deletionStrategy as KubeRay does.
TEST(ValidateTest, TheRayJobDeletionPolicyGateRefusesDeletionStrategies) {
  json doc = validRayJob();
  doc["spec"]["deletionStrategy"] = {{"onSuccess", {{"policy", "DeleteCluster"}}},
                                     {"onFailure", {{"policy", "DeleteNone"}}}};
  EXPECT_FALSE(validateRayJob(parseRayJob(doc)));
  FeatureGates off;
  off.rayJobDeletionPolicy = false;
  auto e = validateRayJob(parseRayJob(doc), off);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message, "RayJobDeletionPolicy feature gate must be enabled to use DeletionStrategy");
}

// The embedded GCS store (backend: rocksdb): refused while its gate is off, with the gate on
// refused when Redis settings, a claim with the operator-made claim's settings, or KubeRay's own
// env, volume or mount are set; KubeRay's texts. Before, rocksdb was refused whatever the gate.
TEST(ValidateTest, TheEmbeddedGcsStoreFollowsItsGateAndKubeRaysRules) {
  const std::string p = kInvalid;
  FeatureGates on;
  on.gcsFaultToleranceEmbeddedStorage = true;
  auto with = [&](const FeatureGates& gates, auto edit) {
    json doc = validRayJob();
    json& c = doc["spec"]["rayClusterSpec"];
    c["gcsFaultToleranceOptions"] = {{"backend", "rocksdb"}};
    edit(c["gcsFaultToleranceOptions"], c["headGroupSpec"]["template"]["spec"]);
    auto e = validateRayJob(parseRayJob(doc), gates);
    return e ? e->message : std::string();
  };
  auto nothing = [](json&, json&) {};
  EXPECT_EQ(with(FeatureGates{}, nothing),
            p + "the embedded RocksDB GCS fault tolerance backend (GcsFaultToleranceOptions.Backend: "
                "'rocksdb') requires the GCSFaultToleranceEmbeddedStorage feature gate to be enabled");
  EXPECT_EQ(with(on, nothing), "");
  EXPECT_EQ(with(on, [](json& o, json&) { o["storage"] = {{"size", "5Gi"}, {"subPath", "gcs"}}; }), "");
  EXPECT_EQ(with(on, [](json& o, json&) { o["redisAddress"] = "redis:6379"; }),
            p + "cannot set GcsFaultToleranceOptions.RedisAddress when backend is 'rocksdb'");
  EXPECT_EQ(with(on, [](json& o, json&) { o["redisPassword"] = {{"value", "x"}}; }),
            p + "cannot set GcsFaultToleranceOptions.RedisPassword when backend is 'rocksdb'");
  EXPECT_EQ(with(on, [](json& o, json&) { o["externalStorageNamespace"] = "ns"; }),
            p + "cannot set GcsFaultToleranceOptions.ExternalStorageNamespace when backend is 'rocksdb'");
  EXPECT_EQ(with(on, [](json& o, json&) { o["storage"] = {{"claimName", "mine"}, {"size", "1Gi"}}; }),
            p + "GcsFaultToleranceOptions.Storage.ClaimName is mutually exclusive with size, "
                "storageClassName, and accessModes");
  EXPECT_EQ(with(on, [](json&, json& pod) {
              pod["containers"][0]["env"] = {{{"name", "RAY_gcs_storage_path"}, {"value", "/x"}}};
            }),
            p + "cannot set `RAY_gcs_storage` or `RAY_gcs_storage_path` env var in head Pod when the "
                "embedded GCS FT backend is used - these are managed by KubeRay");
  EXPECT_EQ(with(on, [](json&, json& pod) {
              pod["containers"][0]["volumeMounts"] = {{{"name", "data"}, {"mountPath", "/data/gcs"}}};
            }),
            p + "cannot set a volume mount named \"gcs-storage\" or mounted at /data/gcs in the head "
                "container when the embedded GCS FT backend is used - it is managed by KubeRay");
  EXPECT_EQ(with(on, [](json&, json& pod) { pod["volumes"] = {{{"name", "gcs-storage"}}}; }),
            p + "cannot set a volume named \"gcs-storage\" in the head Pod when the embedded GCS FT "
                "backend is used - it is managed by KubeRay");
  EXPECT_EQ(with(on, [](json& o, json&) {
              o["backend"] = "redis";
              o["storage"] = {{"size", "1Gi"}};
            }),
            p + "cannot set GcsFaultToleranceOptions.Storage when backend is 'redis' - it only "
                "applies to the 'rocksdb' backend");
}

// validateWorkerGroupPriority: a worker group's priority needs Ray 2.56 and autoscaler v2 (before,
// any priority passed, and Ray older than 2.56 ignored it).
TEST(ValidateTest, AWorkerGroupPriorityNeedsRay256AndAutoscalerV2) {
  const std::string p = kInvalid;
  auto with = [](const char* version, bool v2, int priority) {
    json doc = validRayJob();
    json& c = doc["spec"]["rayClusterSpec"];
    if (version) c["rayVersion"] = version;
    if (v2) {
      c["enableInTreeAutoscaling"] = true;
      c["autoscalerOptions"] = {{"version", "v2"}};
    }
    c["workerGroupSpecs"] = json::array({c["headGroupSpec"]});
    c["workerGroupSpecs"][0]["groupName"] = "g";
    c["workerGroupSpecs"][0]["priority"] = priority;
    return invalid(doc);
  };
  const std::string group = "g";
  EXPECT_EQ(with(nullptr, false, 0), "") << "priority 0 is unset";
  EXPECT_EQ(with(nullptr, true, 5), p + "worker group " + group +
                                        ": priority is set, but RayVersion was not specified. Ray "
                                        "version 2.56.0 or later is required");
  EXPECT_EQ(with("2.55.0", true, 5),
            p + "worker group " + group + ": priority is set, but minimum Ray version is 2.56.0, got 2.55.0");
  EXPECT_EQ(with("2.60.0", false, 5),
            p + "worker group " + group +
                ": priority is set to 5, but autoscaler v2 is not enabled. Priority is only supported "
                "with autoscaler v2 enabled");
  EXPECT_EQ(with("2.60.0", true, 5), "");
}

// validateRayGroupLabels: a group's Ray labels follow Kubernetes label syntax, with
// apimachinery's messages. Before, any key and value passed.
TEST(ValidateTest, GroupLabelsFollowKubernetesLabelSyntax) {
  auto with = [](json labels) {
    json doc = validRayJob();
    doc["spec"]["rayClusterSpec"]["headGroupSpec"]["labels"] = labels;
    return invalid(doc);
  };
  EXPECT_EQ(with({{"ray.io/accelerator", "A100"}, {"zone", ""}}), "");
  EXPECT_EQ(with({{"bad key", "v"}}),
            std::string(kInvalid) +
                "invalid label key for Head group: 'bad key', error: name part must consist of "
                "alphanumeric characters, '-', '_' or '.', and must start and end with an "
                "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
                "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
  std::string value = with({{"k", "-x"}});
  EXPECT_NE(value.find("invalid label value for key 'k' in Head group: '-x', error: a valid "
                       "label must be an empty string"),
            std::string::npos)
      << value;
  EXPECT_NE(with({{"Example.com/k", "v"}}).find("prefix part a lowercase RFC 1123 subdomain"),
            std::string::npos);
  EXPECT_NE(with({{"a/b/c", "v"}}).find("with an optional DNS subdomain prefix"),
            std::string::npos);
  EXPECT_NE(with({{"k", std::string(64, 'v')}}).find("must be no more than 63 characters"),
            std::string::npos);
}

// `metadata` needs Ray 2.6.0 in the submit command (K8sJobMode, SidecarMode); HTTPMode sends it
// in the request. Before, an old cluster got a submitter whose --metadata-json Ray rejects.
TEST(ValidateTest, MetadataNeedsRay260InTheSubmitCommandModes) {
  auto with = [](const char* mode, const char* version) {
    json doc = validRayJob();
    doc["spec"]["submissionMode"] = mode;
    doc["spec"]["metadata"] = {{"team", "ml"}};
    doc["spec"]["rayClusterSpec"]["rayVersion"] = version;
    return invalid(doc);
  };
  EXPECT_EQ(with("K8sJobMode", "2.5.1"),
            "The RayJob spec is invalid: the Ray version must be at least 2.6.0 to use the "
            "metadata field");
  EXPECT_NE(with("SidecarMode", "2.4.0"), "");
  EXPECT_EQ(with("K8sJobMode", "nightly"),
            "The RayJob spec is invalid: failed to parse Ray version: nightly");
  EXPECT_EQ(with("HTTPMode", "2.5.1"), "");
  EXPECT_EQ(with("K8sJobMode", "2.6.0"), "");
  EXPECT_EQ(with("K8sJobMode", ""), "") << "an unset rayVersion is taken as recent";
}

// The per-attempt key's annotation: a typo or a clash with the user's own key is named, not
// silently ignored (the job would deduplicate by the wrong key).
TEST(ValidateTest, TheAttemptAnnotationIsTrueOrFalseAndOwnsItsMetadataKey) {
  auto with = [](const char* value, json metadata) {
    json doc = validRayJob();
    doc["metadata"]["annotations"] = {{"rayjournal.io/attempt-in-submission-metadata", value}};
    if (!metadata.is_null()) doc["spec"]["metadata"] = metadata;
    return invalid(doc);
  };
  EXPECT_EQ(with("true", nullptr), "");
  EXPECT_EQ(with("false", {{"rayjournal.io/attempt", "7"}}), "");
  EXPECT_EQ(with("yes", nullptr),
            "The RayJob metadata is invalid: annotation "
            "rayjournal.io/attempt-in-submission-metadata must be \"true\" or \"false\", not "
            "\"yes\"");
  EXPECT_EQ(with("true", {{"rayjournal.io/attempt", "7"}}),
            "The RayJob metadata is invalid: spec.metadata sets rayjournal.io/attempt, which "
            "annotation rayjournal.io/attempt-in-submission-metadata asks the operator to set");
}

TEST(FeatureGatesTest, ParsedAsGosFeatureGateFlag) {
  FeatureGateParse p = parseFeatureGates("RayJobDeletionPolicy=false, RayCronJob=true");
  EXPECT_EQ(p.error, "");
  EXPECT_FALSE(p.gates.rayJobDeletionPolicy);
  EXPECT_TRUE(p.gates.rayClusterStatusConditions);
  EXPECT_EQ(p.withoutEffect, std::vector<std::string>{"RayCronJob"});
  EXPECT_EQ(parseFeatureGates("Teleport=true").error, "unrecognized feature gate: Teleport");
  EXPECT_EQ(parseFeatureGates("RayJobDeletionPolicy=maybe").error,
            "invalid value of RayJobDeletionPolicy=maybe, err: strconv.ParseBool: parsing "
            "\"maybe\": invalid syntax");
  EXPECT_TRUE(parseFeatureGates("SidecarSubmitterRestart=true").gates.sidecarSubmitterRestart);
  EXPECT_FALSE(parseFeatureGates("SidecarSubmitterRestart=false").gates.sidecarSubmitterRestart);
  EXPECT_FALSE(parseFeatureGates("").gates.sidecarSubmitterRestart) << "alpha: off by default";
  EXPECT_TRUE(parseFeatureGates("GCSFaultToleranceEmbeddedStorage=true").gates.gcsFaultToleranceEmbeddedStorage);
  EXPECT_TRUE(parseFeatureGates("GCSFaultToleranceEmbeddedStorage=true").withoutEffect.empty());
  EXPECT_FALSE(parseFeatureGates("").gates.gcsFaultToleranceEmbeddedStorage) << "alpha: off by default";
  EXPECT_TRUE(parseFeatureGates("").error.empty());
}

}  // namespace
}  // namespace rayjournal::controller
