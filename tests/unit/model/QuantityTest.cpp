// Kubernetes quantities as apimachinery reads and writes them.
#include <gtest/gtest.h>

#include "model/Quantity.h"

namespace rayjournal::model {
namespace {

int64_t ceilOf(const char* text) { return parseQuantity(text).value().ceilValue(); }

TEST(QuantityTest, IntegersRoundUpAsQuantityValue) {
  EXPECT_EQ(ceilOf("2"), 2);
  EXPECT_EQ(ceilOf("500m"), 1) << "half a CPU tells Ray 1, as KubeRay";
  EXPECT_EQ(ceilOf("1500m"), 2);
  EXPECT_EQ(ceilOf("0.5"), 1);
  EXPECT_EQ(ceilOf("1Gi"), 1073741824);
  EXPECT_EQ(ceilOf("4G"), 4000000000);
  EXPECT_EQ(ceilOf("1e3"), 1000);
  EXPECT_EQ(ceilOf("+3k"), 3000);
}

TEST(QuantityTest, NotAQuantityIsRefused) {
  for (const char* bad : {"", "Gi", "1Q", "1 Gi", "1Gi2", ".", "--1", "1e"})
    EXPECT_FALSE(parseQuantity(bad)) << bad;
}

TEST(QuantityTest, HugeValuesSaturate) {
  EXPECT_EQ(ceilOf("100Ei"), INT64_MAX);
  EXPECT_EQ(formatQuantity({1e30L, false}), "9223372036854775807") ;
}

TEST(QuantityTest, FormatsAsApimachineryCanonicalForm) {
  EXPECT_EQ(formatQuantity({0, false}), "0");
  EXPECT_EQ(formatQuantity({2, false}), "2");
  EXPECT_EQ(formatQuantity({1.5L, false}), "1500m");
  EXPECT_EQ(formatQuantity({3e9L, false}), "3G");
  EXPECT_EQ(formatQuantity({2000, false}), "2k");
  EXPECT_EQ(formatQuantity({6.0L * 1073741824, true}), "6Gi");
  EXPECT_EQ(formatQuantity({1536.0L * 1048576, true}), "1536Mi");
  EXPECT_EQ(formatQuantity({1000, true}), "1000") << "no binary suffix divides it";
}

}  // namespace
}  // namespace rayjournal::model
