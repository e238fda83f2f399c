#include <gtest/gtest.h>

#include "wal/Coding.h"
#include "wal/JournalError.h"
#include "wal/RecordCodec.h"

namespace rayjournal::wal {
namespace {

Record sample(RecordType type) {
  Record r;
  r.type = type;
  r.timeMs = 1764475200123;
  r.epoch = 7;
  r.attempt = 3;
  r.object = {"RayJob", "default", "train-mnist", "5f1c-uid"};
  r.body = std::string("any bytes\0 the journal does not read", 37);
  return r;
}

// Journals already written carry IEEE CRC-32s: any other polynomial (CRC-32C, say) would make
// every stored record look corrupt.
TEST(RecordCodecTest, TheChecksumIsTheIeeeCrc32OfFormatMd) {
  EXPECT_EQ(crc32(""), 0u);
  EXPECT_EQ(crc32("123456789"), 0xCBF43926u);
  EXPECT_EQ(crc32(std::string(1 << 20, '\0')), 0xA738EA1Cu);
}

TEST(RecordCodecTest, EveryRecordTypeRoundTrips) {
  for (auto type : {RecordType::ControllerStarted, RecordType::Intent, RecordType::Outcome,
                    RecordType::Observation, RecordType::Checkpoint}) {
    Record r = sample(type);
    Record back = decodeRecord(99, encodeRecord(r));
    r.seq = 99;
    EXPECT_EQ(back, r) << recordTypeName(type);
  }
}

TEST(RecordCodecTest, ControllerLevelRecordHasNoObject) {
  Record r;
  r.type = RecordType::ControllerStarted;
  r.body = "epoch 2";
  Record back = decodeRecord(1, encodeRecord(r));
  EXPECT_TRUE(back.object.empty());
  EXPECT_EQ(back.body, "epoch 2");
}

TEST(RecordCodecTest, FlippedByteIsChecksumMismatchNamingSeq) {
  std::string value = encodeRecord(sample(RecordType::Intent));
  value[value.size() / 2] ^= 0x40;
  try {
    decodeRecord(17, value);
    FAIL() << "corruption not detected";
  } catch (const CorruptionError& e) {
    EXPECT_EQ(e.seq(), 17u);
    EXPECT_NE(std::string(e.what()).find("checksum mismatch"), std::string::npos);
  }
}

TEST(RecordCodecTest, TruncatedValueIsCorruption) {
  std::string value = encodeRecord(sample(RecordType::Outcome));
  EXPECT_THROW(decodeRecord(5, value.substr(0, 3)), CorruptionError);
  EXPECT_THROW(decodeRecord(5, value.substr(0, value.size() - 4)), CorruptionError);
}

TEST(RecordCodecTest, NewerFormatVersionIsClearErrorNotCorruption) {
  std::string value = encodeRecord(sample(RecordType::Intent));
  value[0] = static_cast<char>(kRecordFormatVersion + 1);
  try {
    decodeRecord(3, value);
    FAIL();
  } catch (const CorruptionError&) {
    FAIL() << "a newer version must not look like corruption";
  } catch (const JournalError& e) {
    std::string newer = "format version " + std::to_string(kRecordFormatVersion + 1);
    std::string ours = "up to version " + std::to_string(kRecordFormatVersion);
    EXPECT_NE(std::string(e.what()).find(newer), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(ours), std::string::npos) << e.what();
  }
}

TEST(RecordCodecTest, SeqKeysSortNumerically) {
  EXPECT_LT(encodeSeqKey(255), encodeSeqKey(256));
  EXPECT_LT(encodeSeqKey(1), encodeSeqKey(1ull << 40));
  EXPECT_EQ(decodeSeqKey(encodeSeqKey(123456789012ull)), 123456789012ull);
  EXPECT_EQ(decodeSeqKey(encodeObjectIndexKey("RayJob/ns/a", 77)), 77u);
}

}  // namespace
}  // namespace rayjournal::wal
