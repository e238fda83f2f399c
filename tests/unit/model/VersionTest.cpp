#include "model/Version.h"

#include <gtest/gtest.h>

namespace rayjournal::model {
namespace {

TEST(VersionTest, ReadsRayVersionsAndServerGitVersionsAlike) {
  EXPECT_EQ(parseVersion("2.52.0"), (Version{2, 52, 0}));
  EXPECT_EQ(parseVersion("v2.52"), (Version{2, 52, 0}));
  EXPECT_EQ(parseVersion("v1.35.2-gke.1"), (Version{1, 35, 2}));
  EXPECT_EQ(parseVersion("1.34.0+k3s1"), (Version{1, 34, 0}));
}

TEST(VersionTest, TextWithoutMajorDotMinorIsNotAVersion) {
  for (const char* text : {"", "v", "2", "v2.", "latest", "nightly-2.9", ".5.1", "v.1.2"})
    EXPECT_EQ(parseVersion(text), std::nullopt) << text;
  EXPECT_FALSE(versionAtLeast("latest", 0, 0));
}

TEST(VersionTest, ComparesMajorThenMinorThenPatch) {
  EXPECT_TRUE(versionAtLeast("v1.35.0", 1, 35));
  EXPECT_FALSE(versionAtLeast("v1.34.9", 1, 35));
  EXPECT_TRUE(versionAtLeast("v2.0.0", 1, 35));
  EXPECT_FALSE(versionAtLeast("2.52.0", 2, 52, 1));
  EXPECT_TRUE(versionAtLeast("2.53", 2, 52, 9));
}

}  // namespace
}  // namespace rayjournal::model
