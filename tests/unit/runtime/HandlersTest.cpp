// Watch event -> key mapping.
#include "runtime/Handlers.h"

#include <gtest/gtest.h>

namespace rayjournal::runtime {
namespace {

using nlohmann::json;

TEST(HandlersTest, ObjectsMapToThemselvesTheirControllerOwnerOrALabel) {
  json pod{{"metadata",
            {{"name", "c-head"},
             {"namespace", "team"},
             {"labels", {{"ray.io/cluster", "c"}}},
             {"ownerReferences",
              json::array({{{"kind", "RayCluster"}, {"name", "c"}, {"controller", true}},
                           {{"kind", "RayJob"}, {"name", "not-controller"}}})}}}};
  EXPECT_EQ(keyOfObject(pod), "team/c-head");
  EXPECT_EQ(keyOfControllerOwner(pod, "RayCluster"), "team/c");
  EXPECT_EQ(keyOfControllerOwner(pod, "RayJob"), "") << "only the controlling owner counts";
  EXPECT_EQ(keyOfLabel(pod, "ray.io/cluster"), "team/c");
}

TEST(HandlersTest, MalformedObjectsMapToNothing) {
  for (const json& bad : {json(nullptr), json::array(), json{{"metadata", "x"}},
                          json{{"metadata", {{"ownerReferences", 5}, {"labels", "y"}}}}}) {
    EXPECT_EQ(keyOfObject(bad), "");
    EXPECT_EQ(keyOfControllerOwner(bad, "RayJob"), "");
    EXPECT_EQ(keyOfLabel(bad, "ray.io/cluster"), "");
  }
}

}  // namespace
}  // namespace rayjournal::runtime
