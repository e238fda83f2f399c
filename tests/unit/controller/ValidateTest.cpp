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

TEST(ValidateTest, V1_NameLengthAndDns1035) {
  json doc = manifest();
  doc["metadata"]["name"] = std::string(48, 'a');
  EXPECT_NE(invalid(doc).find("metadata.name"), std::string::npos);
  doc["metadata"]["name"] = "Upper_Case";
  EXPECT_NE(invalid(doc).find("DNS-1035"), std::string::npos);
  doc["metadata"]["name"] = std::string(47, 'a');
  EXPECT_EQ(invalid(doc), "");
}

TEST(ValidateTest, V2_SuspendRequiresShutdown) {
  json doc = manifest();
  doc["spec"]["suspend"] = true;
  EXPECT_NE(invalid(doc).find("spec.suspend"), std::string::npos);
  doc["spec"]["shutdownAfterJobFinishes"] = true;
  EXPECT_EQ(invalid(doc), "");
}

TEST(ValidateTest, V3_TtlRules) {
  json doc = manifest();
  doc["spec"]["ttlSecondsAfterFinished"] = -1;
  EXPECT_NE(invalid(doc).find("ttlSecondsAfterFinished"), std::string::npos);
  doc["spec"]["ttlSecondsAfterFinished"] = 10;
  EXPECT_NE(invalid(doc).find("shutdownAfterJobFinishes"), std::string::npos);
}

TEST(ValidateTest, V4_DeletionStrategy) {
  json doc = manifest();
  doc["spec"]["deletionStrategy"] = json::object();
  EXPECT_NE(invalid(doc).find("deletionStrategy"), std::string::npos);
  doc["spec"]["deletionStrategy"] = {{"onSuccess", {{"policy", "DeleteCluster"}}}};
  EXPECT_NE(invalid(doc).find("set together"), std::string::npos);
  doc["spec"]["deletionStrategy"] = {
      {"deletionRules",
       json::array({{{"policy", "DeleteSelf"},
                     {"condition", {{"jobStatus", "SUCCEEDED"}, {"ttlSeconds", 1}}}},
                    {{"policy", "DeleteCluster"},
                     {"condition", {{"jobStatus", "SUCCEEDED"}, {"ttlSeconds", 5}}}}})}};
  EXPECT_NE(invalid(doc).find("TTLs must grow"), std::string::npos);
  doc["spec"]["deletionStrategy"]["deletionRules"][0]["condition"]["ttlSeconds"] = 10;
  EXPECT_EQ(invalid(doc), "");
  doc["spec"]["shutdownAfterJobFinishes"] = true;
  EXPECT_NE(invalid(doc).find("shutdownAfterJobFinishes"), std::string::npos);
}

TEST(ValidateTest, V5_V6_ClusterSelectorRules) {
  json doc = manifest();
  doc["spec"].erase("rayClusterSpec");
  EXPECT_NE(invalid(doc).find("rayClusterSpec"), std::string::npos);
  doc["spec"]["clusterSelector"] = {{"ray.io/cluster", ""}};
  EXPECT_NE(invalid(doc).find("non-empty"), std::string::npos);
  doc["spec"]["clusterSelector"] = {{"ray.io/cluster", "shared"}};
  EXPECT_EQ(invalid(doc), "");
  doc["spec"]["backoffLimit"] = 1;
  EXPECT_NE(invalid(doc).find("backoffLimit"), std::string::npos);
  doc["spec"]["backoffLimit"] = 0;
  doc["spec"]["suspend"] = true;
  doc["spec"]["shutdownAfterJobFinishes"] = true;
  EXPECT_NE(invalid(doc).find("clusterSelector"), std::string::npos);
}

TEST(ValidateTest, V7_V8_ModeRules) {
  json doc = manifest();
  doc["spec"]["submissionMode"] = "InteractiveMode";
  doc["spec"]["backoffLimit"] = 2;
  EXPECT_NE(invalid(doc).find("InteractiveMode"), std::string::npos);
  doc = manifest();
  doc["spec"]["submissionMode"] = "SidecarMode";
  doc["spec"]["submitterConfig"] = {{"backoffLimit", 3}};
  EXPECT_NE(invalid(doc).find("submitterConfig"), std::string::npos);
  doc["spec"].erase("submitterConfig");
  doc["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["restartPolicy"] = "Always";
  EXPECT_NE(invalid(doc).find("restartPolicy"), std::string::npos);
}

TEST(ValidateTest, V9_ClusterSpec) {
  json doc = manifest();
  doc["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"] = json::array();
  EXPECT_NE(invalid(doc).find("at least one container"), std::string::npos);
  doc = manifest();
  doc["spec"]["rayClusterSpec"]["workerGroupSpecs"] =
      json::array({{{"groupName", "g"}, {"minReplicas", 5}, {"maxReplicas", 1}}});
  EXPECT_NE(invalid(doc).find("minReplicas"), std::string::npos);
}

TEST(ValidateTest, V10_V11_V12) {
  json doc = manifest();
  doc["spec"]["runtimeEnvYAML"] = "a: [unclosed";
  EXPECT_NE(invalid(doc).find("runtimeEnvYAML"), std::string::npos);
  doc = manifest();
  doc["spec"]["activeDeadlineSeconds"] = 0;
  EXPECT_NE(invalid(doc).find("activeDeadlineSeconds"), std::string::npos);
  doc = manifest();
  doc["spec"]["backoffLimit"] = -1;
  EXPECT_NE(invalid(doc).find("backoffLimit"), std::string::npos);
  doc = manifest();
  doc["status"] = {{"jobDeploymentStatus", "Waiting"}};
  auto e = validateRayJob(parseRayJob(doc));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->reason, "InvalidRayJobStatus");
}

}  // namespace
}  // namespace rayjournal::controller
