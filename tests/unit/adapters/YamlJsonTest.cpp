// YAML as kubectl and KubeRay read it (go-yaml v2 through sigs.k8s.io/yaml: YAML 1.1 scalars).
#include "adapters/YamlJson.h"

#include <gtest/gtest.h>

namespace rayjournal {
namespace {

using nlohmann::json;

// Before, `suspend: yes` was the string "yes" (refused as not a boolean) and `pip: on` stayed a
// string in the runtime environment Ray received; kubectl sends true for both.
TEST(YamlJsonTest, Yaml11BooleansAreBooleansAsInGo) {
  json doc = parseYaml("a: yes\nb: No\nc: on\nd: OFF\ne: y\nf: n\ng: TRUE\nh: 'yes'\ni: \"on\"\n");
  EXPECT_EQ(doc, (json{{"a", true}, {"b", false}, {"c", true}, {"d", false}, {"e", true},
                       {"f", false}, {"g", true}, {"h", "yes"}, {"i", "on"}}));
}

TEST(YamlJsonTest, NullsIntegersAndKeysAsInGo) {
  json doc = parseYaml("a: Null\nb: NULL\nc: 0x1F\nd: 0755\ne: 1_000\nf: -12\ng: 1.5\nh: 08\n"
                       "i: inf\nj: 0b101\nk: 007abc\n");
  EXPECT_TRUE(doc["a"].is_null());
  EXPECT_TRUE(doc["b"].is_null());
  EXPECT_EQ(doc["c"], 31);
  EXPECT_EQ(doc["d"], 493);
  EXPECT_EQ(doc["e"], 1000);
  EXPECT_EQ(doc["f"], -12);
  EXPECT_EQ(doc["g"], 1.5);
  EXPECT_EQ(doc["h"], 8.0);
  EXPECT_EQ(doc["i"], "inf");
  EXPECT_EQ(doc["j"], 5);
  EXPECT_EQ(doc["k"], "007abc");
  EXPECT_EQ(parseYaml("on: push\n1: one\n'off': x\n"),
            (json{{"true", "push"}, {"1", "one"}, {"off", "x"}}));
}

}  // namespace
}  // namespace rayjournal
