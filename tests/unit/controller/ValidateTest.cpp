// Validation rules V1-V12 of KubeRay's RayJob (reference section 2): the message of each rule.
#include "controller/Validate.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/MinimalRayJob.h"

#include "controller/RayJob.h"

namespace rayjournal::controller {
namespace {

using nlohmann::json;

json manifest() { return testing::minimalRayJob(); }

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
    json doc = manifest();
    doc["spec"][c.field] = c.value;
    RayJob job;
    ASSERT_NO_THROW(job = parseRayJob(doc)) << c.field;
    auto e = validateRayJob(job);
    ASSERT_TRUE(e) << c.field << " = " << c.value.dump() << " was accepted";
    EXPECT_EQ(e->reason, "InvalidRayJobSpec");
    EXPECT_NE(e->message.find(c.says), std::string::npos) << e->message;
  }
  json doc = manifest();
  doc["spec"]["backoffLimit"] = 2147483647;
  EXPECT_EQ(parseRayJob(doc).spec.backoffLimit, 2147483647);
  EXPECT_FALSE(validateRayJob(parseRayJob(doc)));
}

// KubeRay's message texts, word for word (alerting rules match status.message).
constexpr const char* kInvalid = "The RayJob spec is invalid: ";

TEST(ValidateTest, V1_NameLengthAndDns1035) {
  json doc = manifest();
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
  json doc = manifest();
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
  json doc = manifest();
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
  json doc = manifest();
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
  json doc = manifest();
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
  json doc = manifest();
  doc["spec"]["submissionMode"] = "InteractiveMode";
  doc["spec"]["backoffLimit"] = 2;
  EXPECT_EQ(invalid(doc), std::string(kInvalid) + "BackoffLimit is incompatible with InteractiveMode");
  doc = manifest();
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
  json doc = manifest();
  doc["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"] = json::array();
  EXPECT_EQ(invalid(doc), std::string(kInvalid) + "headGroupSpec should have at least one container");
  doc = manifest();
  json worker = {{"groupName", "g"}, {"minReplicas", 5}, {"maxReplicas", 1}};
  doc["spec"]["rayClusterSpec"]["workerGroupSpecs"] = json::array({worker});
  EXPECT_EQ(invalid(doc), std::string(kInvalid) + "workerGroupSpec should have at least one container");
  worker["template"] = {{"spec", {{"containers", json::array({{{"name", "w"}}})}}}};
  doc["spec"]["rayClusterSpec"]["workerGroupSpecs"] = json::array({worker});
  EXPECT_EQ(invalid(doc), std::string(kInvalid) + "worker group g has minReplicas 5 greater than maxReplicas 1");
}

// runtimeEnvYAML must be YAML whose value is a mapping (a list once passed and was submitted).
TEST(ValidateTest, V10_V11_V12) {
  json doc = manifest();
  doc["spec"]["runtimeEnvYAML"] = "a: [unclosed";
  EXPECT_EQ(invalid(doc).rfind("failed to unmarshal RuntimeEnvYAML: a: [unclosed: ", 0), 0u);
  doc["spec"]["runtimeEnvYAML"] = "- pip\n- numpy\n";
  EXPECT_EQ(invalid(doc),
            "failed to unmarshal RuntimeEnvYAML: - pip\n- numpy\n: error unmarshaling JSON: while "
            "decoding JSON: json: cannot unmarshal array into Go value of type "
            "utiltypes.RuntimeEnvType");
  doc["spec"]["runtimeEnvYAML"] = "pip: [numpy]\n";
  EXPECT_EQ(invalid(doc), "");
  doc = manifest();
  doc["spec"]["activeDeadlineSeconds"] = 0;
  EXPECT_EQ(invalid(doc), std::string(kInvalid) + "activeDeadlineSeconds must be a positive integer");
  doc = manifest();
  doc["spec"]["backoffLimit"] = -1;
  EXPECT_EQ(invalid(doc), std::string(kInvalid) + "backoffLimit must be a positive integer");
  doc = manifest();
  doc["status"] = {{"jobDeploymentStatus", "Waiting"}};
  auto e = validateRayJob(parseRayJob(doc));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->reason, "InvalidRayJobStatus");
  EXPECT_EQ(e->message,
            "The RayJob status is invalid: JobDeploymentStatus cannot be `Waiting` when "
            "SubmissionMode is not InteractiveMode");
}

}  // namespace
}  // namespace rayjournal::controller
