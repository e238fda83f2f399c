#include "wal/LostRanges.h"

#include <gtest/gtest.h>

#include "wal/FileNames.h"
#include "wal/JournalError.h"

namespace rayjournal::wal {
namespace {

TEST(LostRangesTest, AdjacentAndOverlappingRangesMerge) {
  LostRanges lost;
  lost.add(10, 12);
  lost.add(13, 15);
  lost.add(20, 30);
  lost.add(25, 40);
  EXPECT_EQ(lost.toString(), "10-15,20-40");
  EXPECT_EQ(lost.count(), 6u + 21u);
  EXPECT_EQ(LostRanges::parse(lost.toString()).toString(), lost.toString());
}

TEST(LostRangesTest, CoversOnlyWholeRanges) {
  LostRanges lost = LostRanges::parse("5-9,20-20");
  EXPECT_TRUE(lost.covers(5, 9));
  EXPECT_TRUE(lost.covers(6, 7));
  EXPECT_FALSE(lost.covers(4, 5));
  EXPECT_FALSE(lost.covers(9, 20));
  EXPECT_TRUE(lost.contains(20));
  EXPECT_TRUE(lost.covers(30, 29));  // empty
}

TEST(LostRangesTest, MinusLeavesWhatTheOtherDoesNotHold) {
  LostRanges all = LostRanges::parse("1-100");
  EXPECT_EQ(all.minus(LostRanges::parse("10-20,50-60")).toString(), "1-9,21-49,61-100");
  EXPECT_EQ(all.minus(LostRanges::parse("1-100")).toString(), "");
  EXPECT_EQ(LostRanges::parse("5-6").minus(LostRanges()).toString(), "5-6");
}

TEST(LostRangesTest, MalformedTextIsAnError) {
  EXPECT_THROW(LostRanges::parse("9-5"), JournalError);
  EXPECT_THROW(LostRanges::parse("a-b"), JournalError);
  EXPECT_THROW(LostRanges::parse("0-3"), JournalError);
  EXPECT_THROW(LostRanges::parse("7"), JournalError);
}

TEST(LostRangesTest, AnyBetweenIsStrict) {
  LostRanges lost;
  lost.add(10, 12);
  EXPECT_TRUE(lost.anyBetween(9, 13));
  EXPECT_TRUE(lost.anyBetween(11, 20));
  EXPECT_FALSE(lost.anyBetween(12, 20));
  EXPECT_FALSE(lost.anyBetween(1, 10));
}

TEST(FileNamesTest, OnlyPlainDecimalsAndRocksDbNumberedNamesParse) {
  EXPECT_EQ(parseDecimal("18446744073709551615"), std::nullopt);  // 20 digits
  EXPECT_EQ(parseDecimal("1234567890123456789"), 1234567890123456789u);
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "0x1f"}) EXPECT_EQ(parseDecimal(bad), std::nullopt);
  EXPECT_EQ(fileNumber("/j/000017.sst", ".sst"), 17u);
  EXPECT_EQ(fileNumber("/j/000017.sst", ".log"), std::nullopt);
  EXPECT_EQ(fileNumber("/j/MANIFEST-000005", ".log"), std::nullopt);
  EXPECT_EQ(fileNumber("/j/x17.log", ".log"), std::nullopt);
}

}  // namespace
}  // namespace rayjournal::wal
