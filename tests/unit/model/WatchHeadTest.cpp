// The two WatchHead decoders: the byte decoder (SAX, no document) must read what the document
// path reads, on events recorded from a real API server, and refuse hostile bytes cleanly.
#include "model/WatchHead.h"

#include <gtest/gtest.h>

#include <fstream>

namespace rayjournal::model {
namespace {

WatchHead decoded(std::string_view line) {
  WatchHead head;
  std::string error;
  EXPECT_TRUE(decodeWatchHead(line, head, &error)) << error;
  return head;
}

// bench/data/watch-stream.jsonl: Pods, RayJobs, RayClusters, Jobs and Services as
// kube-apiserver sent them to a watch during KubeRay's e2e suite (tests/kuberay-e2e).
TEST(WatchHeadTest, TheByteDecoderReadsWhatTheDocumentPathReadsOnARecordedStream) {
  std::ifstream in(std::string(RAYJOURNAL_SOURCE_DIR) + "/bench/data/watch-stream.jsonl");
  ASSERT_TRUE(in);
  int events = 0, owned = 0, labelled = 0;
  for (std::string line; std::getline(in, line); ++events) {
    const WatchHead expected = watchHeadOf(nlohmann::json::parse(line));
    EXPECT_EQ(decoded(line), expected) << line.substr(0, 200);
    ASSERT_FALSE(expected.object.uid.empty()) << line.substr(0, 200);
    owned += !expected.object.owners.empty();
    labelled += !expected.object.labels.empty();
  }
  EXPECT_GE(events, 50);
  EXPECT_GT(owned, 0);
  EXPECT_GT(labelled, 0);
}

TEST(WatchHeadTest, FieldsOfAnotherTypeAreLeftEmptyByBothDecoders) {
  const std::string line =
      R"({"type":"MODIFIED","object":{"kind":7,"metadata":{"name":["x"],"uid":"u","generation":"3",)"
      R"("labels":{"b":"2","a":1,"c":{"d":"e"}},"ownerReferences":[5,{"uid":"o","controller":"yes"}]},)"
      R"("status":{"phase":{"p":1}}}})";
  const WatchHead head = decoded(line);
  EXPECT_EQ(head, watchHeadOf(nlohmann::json::parse(line)));
  EXPECT_EQ(head.object.kind, "");
  EXPECT_EQ(head.object.name, "");
  EXPECT_EQ(head.object.generation, 0);
  ASSERT_EQ(head.object.labels.size(), 1u);
  ASSERT_EQ(head.object.owners.size(), 1u);
  EXPECT_FALSE(head.object.owners[0].controller);
  EXPECT_EQ(head.object.phase, "");
}

TEST(WatchHeadTest, LabelsComeSortedAndARepeatedKeyKeepsItsLastValue) {
  const std::string line =
      R"({"type":"ADDED","object":{"metadata":{"labels":{"z":"1","a":"2","z":"3"}}}})";
  const WatchHead head = decoded(line);
  EXPECT_EQ(head, watchHeadOf(nlohmann::json::parse(line)));
  using Labels = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(head.object.labels, (Labels{{"a", "2"}, {"z", "3"}}));
}

TEST(WatchHeadTest, TruncatedBytesAreRefusedWithTheirPosition) {
  WatchHead head;
  std::string error;
  EXPECT_FALSE(decodeWatchHead(R"({"type":"ADDED","object":{"metadata":{"name":"x")", head, &error));
  EXPECT_NE(error.find("at byte"), std::string::npos) << error;
}

TEST(WatchHeadTest, AnEventThatIsNotAnObjectIsRefused) {
  WatchHead head;
  std::string error;
  EXPECT_FALSE(decodeWatchHead("[1,2]", head, &error));
  EXPECT_NE(error.find("not an array"), std::string::npos) << error;
  EXPECT_FALSE(decodeWatchHead("\"ADDED\"", head, &error));
  EXPECT_NE(error.find("not a scalar"), std::string::npos) << error;
}

// A hostile server's deeply nested event is refused at the limit, not followed down.
TEST(WatchHeadTest, NestingBeyondTheLimitIsRefused) {
  std::string deep = R"({"type":"ADDED","object":{"spec":)";
  for (int i = 0; i < 100000; ++i) deep += "[";
  WatchHead head;
  std::string error;
  EXPECT_FALSE(decodeWatchHead(deep, head, &error));
  EXPECT_NE(error.find("nested deeper"), std::string::npos) << error;
}

}  // namespace
}  // namespace rayjournal::model
