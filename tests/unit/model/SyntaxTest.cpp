// Kubernetes name syntax without std::regex (model/Syntax.h), and the race it removed.
#include "model/Syntax.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "adapters/sim/SimAutoscaler.h"
#include "controller/rayjob/RayJob.h"
#include "controller/rayjob/Validate.h"
#include "support/MinimalRayJob.h"

namespace rayjournal::model {
namespace {

TEST(SyntaxTest, Dns1035LabelsStartWithALetterAndEndAlphanumeric) {
  for (const char* ok : {"a", "my-job", "job-1", "a--b"}) EXPECT_TRUE(isDns1035Label(ok)) << ok;
  for (const char* bad : {"", "1job", "job-", "-job", "Job", "my_job", "my.job", "a b"})
    EXPECT_FALSE(isDns1035Label(bad)) << bad;
}

TEST(SyntaxTest, Dns1123LabelsMayStartWithADigit) {
  for (const char* ok : {"0", "1ns", "team-a", "a1"}) EXPECT_TRUE(isDns1123Label(ok)) << ok;
  for (const char* bad : {"", "-a", "a-", "Team", "a.b"}) EXPECT_FALSE(isDns1123Label(bad)) << bad;
}

TEST(SyntaxTest, SubdomainsAreLabelsJoinedByDots) {
  for (const char* ok : {"example.com", "a", "ray.io", "a-1.b-2.c"})
    EXPECT_TRUE(isDns1123Subdomain(ok)) << ok;
  for (const char* bad : {"", ".a", "a.", "a..b", "Example.com", "a_b.com"})
    EXPECT_FALSE(isDns1123Subdomain(bad)) << bad;
}

TEST(SyntaxTest, QualifiedNamePartsAndLabelValues) {
  for (const char* ok : {"MyName", "my.name", "123-abc", "a", "a_b"})
    EXPECT_TRUE(isQualifiedNamePart(ok)) << ok;
  for (const char* bad : {"", "-a", "a_", ".a", "a/b", "a b"})
    EXPECT_FALSE(isQualifiedNamePart(bad)) << bad;
  EXPECT_TRUE(isLabelValue(""));
  EXPECT_TRUE(isLabelValue("v1.2"));
  EXPECT_FALSE(isLabelValue("v1."));
}

TEST(SyntaxTest, DigitsAfterAFlagAreTheFirstOccurrenceThatHasSome) {
  EXPECT_EQ(digitsAfter("ray start --num-cpus=8 --block", "--num-cpus="), 8);
  EXPECT_EQ(digitsAfter("--num-cpus=$N --num-cpus=4", "--num-cpus="), 4);
  EXPECT_EQ(digitsAfter("ray start --block", "--num-cpus="), std::nullopt);
  EXPECT_EQ(digitsAfter("--num-cpus=99999999999999999999", "--num-cpus="), std::nullopt);
}

TEST(SyntaxTest, TheSimulatedDemandAnnotationIsCpuEqualsUpToSixDigits) {
  EXPECT_EQ(sim::parseCpuDemand("cpu=8"), 8);
  EXPECT_EQ(sim::parseCpuDemand("  cpu = 12\t"), 12);
  EXPECT_EQ(sim::parseCpuDemand("cpu=1234567"), 0);
  EXPECT_EQ(sim::parseCpuDemand("cpu=8x"), 0);
  EXPECT_EQ(sim::parseCpuDemand("gpu=1"), 0);
  EXPECT_EQ(sim::parseCpuDemand("cpu="), 0);
}

// The CI's ThreadSanitizer run of stop 44 caught RayJob validation on a worker thread and the
// simulated autoscaler's demand parsing on the world thread compiling their first std::regex at
// once (a race on libstdc++'s shared ctype cache). Each test runs in its own process, so here
// both run cold and together; under TSan this fails if either grows a shared lazy cache again.
TEST(SyntaxTest, ValidationAndTheSimulatedAutoscalerParseOnTwoThreadsAtOnce) {
  nlohmann::json doc = testing::minimalRayJob();
  doc["metadata"]["name"] = "Not_A_Label";
  const controller::RayJob job = controller::parseRayJob(doc);
  std::optional<controller::ValidationError> refused;
  int64_t demand = 0;
  std::thread validator([&] { refused = controller::validateRayJob(job); });
  std::thread world([&] { demand = sim::parseCpuDemand("cpu=3"); });
  validator.join();
  world.join();
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->message.find("DNS1035"), std::string::npos) << refused->message;
  EXPECT_EQ(demand, 3);
}

}  // namespace
}  // namespace rayjournal::model
