// parseApiJson must give the document nlohmann::json::parse gives, less each API object's
// managedFields: on events recorded from a real API server, and on the bytes simdjson refuses.
#include "model/ApiJson.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace rayjournal::model {
namespace {

using nlohmann::json;

json withoutManagedFields(json doc, const std::string& objectMember) {
  json& object = objectMember.empty() ? doc : doc[objectMember];
  object["metadata"].erase("managedFields");
  return doc;
}

// bench/data/watch-stream.jsonl: Pods, RayJobs, RayClusters, Jobs and Services as
// kube-apiserver sent them to a watch during KubeRay's e2e suite, managedFields and all.
std::vector<std::string> recordedEvents() {
  std::ifstream in(std::string(RAYJOURNAL_SOURCE_DIR) + "/bench/data/watch-stream.jsonl");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  return lines;
}

TEST(ApiJsonTest, AWatchEventIsTheDocumentNlohmannParsesLessItsManagedFields) {
  const std::vector<std::string> events = recordedEvents();
  for (const std::string& line : events) {
    const json parsed = json::parse(line);
    ASSERT_TRUE(parsed["object"]["metadata"].contains("managedFields"));
    const json expected = withoutManagedFields(parsed, "object");
    json got;
    ASSERT_TRUE(buildApiJson(line, ApiShape::WatchEvent, got)) << "simdjson refused it";
    // The same bytes when serialised: the same members, order and number types.
    ASSERT_EQ(got.dump(), expected.dump()) << line.substr(0, 200);
    ASSERT_EQ(json::to_cbor(got), json::to_cbor(expected)) << line.substr(0, 200);
    EXPECT_EQ(parseApiJson(line, ApiShape::Plain).dump(), parsed.dump());
  }
  EXPECT_GE(events.size(), 50u);
}

TEST(ApiJsonTest, AListLeavesOutEveryItemsManagedFieldsAndNothingElse) {
  const std::string bytes =
      R"({"kind":"PodList","metadata":{"resourceVersion":"9"},"items":[)"
      R"({"metadata":{"name":"a","managedFields":[{"manager":"x"}]},)"
      R"("spec":{"template":{"metadata":{"managedFields":"kept"}}}},)"
      R"({"metadata":{"name":"b"}}]})";
  const json got = parseApiJson(bytes, ApiShape::List);
  EXPECT_EQ(got["items"][0]["metadata"], json({{"name", "a"}}));
  EXPECT_EQ(got["items"][0]["spec"]["template"]["metadata"]["managedFields"], "kept");
  EXPECT_EQ(got["items"][1]["metadata"], json({{"name", "b"}}));
  EXPECT_EQ(got["metadata"]["resourceVersion"], "9");
}

TEST(ApiJsonTest, NumbersKeepNlohmannsTypes) {
  const std::string bytes =
      R"({"a":5,"b":-5,"c":18446744073709551615,"d":1.5,"e":1e3,"f":0,"g":[true,null]})";
  const json got = parseApiJson(bytes, ApiShape::Plain);
  const json expected = json::parse(bytes);
  for (const auto& [key, value] : expected.items()) {
    EXPECT_EQ(got[key].type(), value.type()) << key;
    EXPECT_EQ(got[key], value) << key;
  }
}

TEST(ApiJsonTest, TheLastOfARepeatedKeyWinsAsInNlohmann) {
  const std::string bytes = R"({"k":1,"k":{"x":2}})";
  EXPECT_EQ(parseApiJson(bytes, ApiShape::Plain), json::parse(bytes));
}

TEST(ApiJsonTest, BytesSimdjsonRefusesAreParsedAsNlohmannParsesThem) {
  // Past 64 bits: simdjson refuses the integer, nlohmann reads a double.
  const std::string big = R"({"metadata":{"managedFields":[1]},"n":123456789012345678901234567890})";
  json refused;
  EXPECT_FALSE(buildApiJson(big, ApiShape::Object, refused));
  const json got = parseApiJson(big, ApiShape::Object);
  EXPECT_TRUE(got["n"].is_number_float());
  EXPECT_FALSE(got["metadata"].contains("managedFields"));
  for (std::string_view bad : {"", "{", "{\"a\":}", "[1,]", "{\"a\":\"\xff\"}", "nul"})
    EXPECT_TRUE(parseApiJson(bad, ApiShape::Object).is_discarded()) << bad;
}

TEST(ApiJsonTest, ADocumentPastTheKeptParserSizeParsesWithAParserOfItsOwn) {
  std::string bytes = R"({"items":[)";
  while (bytes.size() <= kKeptParserBytes) bytes += R"({"metadata":{"name":"n"}},)";
  bytes += "{}]}";
  json got;
  ASSERT_TRUE(buildApiJson(bytes, ApiShape::List, got));
  EXPECT_EQ(got, json::parse(bytes));
  EXPECT_EQ(parseApiJson(R"({"small":1})", ApiShape::Plain)["small"], 1);
}

// The object as parseApiJson builds it, with the kind a watch gives it.
json objectOf(const std::string& eventBytes, const std::string& kind) {
  json object = parseApiJson(eventBytes, ApiShape::WatchEvent)["object"];
  object["kind"] = kind;
  return object;
}

// The cache keeps the encoding and the handlers read the head: the first must be the whole
// document, the second all of it but the spec, on every event a real API server sent.
TEST(ApiJsonTest, ASplitEventIsTheWholeDocumentEncodedAndItsHeadWithoutTheSpec) {
  const std::vector<std::string> events = recordedEvents();
  for (const std::string& line : events) {
    SplitWatchEvent split;
    ASSERT_TRUE(splitWatchEvent(line, "Recorded", split)) << line.substr(0, 200);
    const json whole = objectOf(line, "Recorded");
    EXPECT_EQ(split.type, json::parse(line)["type"]);
    ASSERT_EQ(json::from_cbor(split.object.encoded), whole) << line.substr(0, 200);
    json head = whole;
    head.erase("spec");
    ASSERT_EQ(split.object.head, head) << line.substr(0, 200);
    EXPECT_LT(split.object.encoded.size(), line.size()) << "managedFields were encoded";
  }
  EXPECT_GE(events.size(), 50u);
}

std::string eventWith(const std::string& spec) {
  return R"({"type":"MODIFIED","object":{"kind":"Other","metadata":{"name":"a",)"
         R"("managedFields":[{"manager":"m"}],"resourceVersion":"3"},"spec":)" +
         spec + R"(,"status":{"phase":"Running"}}})";
}

// Every width of every CBOR head (integers, string lengths, counts) reads back as the document.
TEST(ApiJsonTest, ASplitEncodingReadsBackEveryNumberStringAndNestingAsTheDocument) {
  json values = json::array();
  const uint64_t unsignedOnes[] = {0,          23,         24,
                                   255,        256,        65535,
                                   65536,      4294967295, 4294967296,
                                   uint64_t(std::numeric_limits<int64_t>::max()),
                                   std::numeric_limits<uint64_t>::max()};
  const int64_t negativeOnes[] = {-1,     -24,    -25, -256, -257, -65537,
                                  std::numeric_limits<int64_t>::min()};
  const double doubles[] = {0.5, -1e300, 1e-300, 3.0, 1.7976931348623157e308};
  const size_t lengths[] = {0, 23, 24, 255, 256, 70000};
  for (uint64_t v : unsignedOnes) values.push_back(v);
  for (int64_t v : negativeOnes) values.push_back(v);
  for (double v : doubles) values.push_back(v);
  for (size_t n : lengths) values.push_back(std::string(n, 'x'));
  values.push_back(json::array({true, false, nullptr, json::object(), json::array()}));
  json many = json::object();
  for (int i = 0; i < 300; ++i) many["k" + std::to_string(i)] = i;
  values.push_back(many);
  // Escapes simdjson must unescape, the surrogate pair to one 4-byte character.
  const std::string bytes =
      eventWith(R"({"u":"caf\u00e9 \ud83d\ude00 \" \n\t\/","v":)" + values.dump() + "}");
  SplitWatchEvent split;
  ASSERT_TRUE(splitWatchEvent(bytes, "RayJob", split));
  const json whole = objectOf(bytes, "RayJob");
  EXPECT_EQ(json::from_cbor(split.object.encoded), whole);
  const json spec = json::from_cbor(split.object.encoded)["spec"];
  EXPECT_EQ(spec["v"], values);
  EXPECT_EQ(spec["u"], "caf\u00e9 \U0001F600 \" \n\t/");
  for (size_t i = 0; i < values.size(); ++i)  // unsigned stays unsigned, negative signed
    EXPECT_EQ(spec["v"][i].type(), values[i].type()) << i;
  EXPECT_FALSE(split.object.head.contains("spec"));
  EXPECT_EQ(split.object.head["status"]["phase"], "Running");
  EXPECT_EQ(split.object.head["kind"], "RayJob");
  EXPECT_FALSE(split.object.head["metadata"].contains("managedFields"));
}

TEST(ApiJsonTest, ASplitKeepsTheLastOfARepeatedKeyAsTheDocumentDoes) {
  const std::string bytes =
      R"({"type":"ADDED","type":"DELETED","object":{"metadata":{"name":"a"},"spec":1,)"
      R"("spec":{"x":2},"status":"s","status":{"y":3},"kind":"A","kind":"B"}})";
  SplitWatchEvent split;
  ASSERT_TRUE(splitWatchEvent(bytes, "Job", split));
  EXPECT_EQ(split.type, "DELETED");
  EXPECT_EQ(json::from_cbor(split.object.encoded), objectOf(bytes, "Job"));
  EXPECT_EQ(split.object.head,
            json::parse(R"({"metadata":{"name":"a"},"status":{"y":3},"kind":"Job"})"));
}

// A write's answer: the same split as a watch event's object.
TEST(ApiJsonTest, AnAnswerSplitsIntoItsHeadAndTheWholeDocumentEncoded) {
  const std::string bytes =
      R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"n",)"
      R"("uid":"u","resourceVersion":"7","managedFields":[{"manager":"rayjournal"}]},)"
      R"("spec":{"ports":[{"port":8265}]},"status":{"loadBalancer":{}}})";
  SplitObject split;
  ASSERT_TRUE(splitApiObject(bytes, "Service", split));
  const json whole = parseApiJson(bytes, ApiShape::Object);
  EXPECT_EQ(json::from_cbor(split.encoded), whole);
  json head = whole;
  head.erase("spec");
  EXPECT_EQ(split.head, head);
  for (std::string_view refused : {R"([])", R"({"metadata":"m"})", R"({"spec":{}})", "{"})
    EXPECT_FALSE(splitApiObject(refused, "Service", split)) << refused;
}

// What the split does not take goes to the whole path, which knows bookmarks, errors and what
// is malformed.
TEST(ApiJsonTest, ASplitRefusesWhatIsNotAChangeOfAnObjectWithMetadata) {
  SplitWatchEvent split;
  for (std::string_view refused :
       {R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})",
        R"({"type":"ERROR","object":{"kind":"Status","code":410}})",
        R"({"type":"ADDED","object":null})", R"({"type":"ADDED","object":{"metadata":[]}})",
        R"({"type":"ADDED","object":{"spec":{}}})", R"({"type":7,"object":{"metadata":{}}})",
        R"({"object":{"metadata":{}}})", R"([{"type":"ADDED"}])", R"({"type":"ADDED",)",
        R"({"type":"ADDED","object":{"metadata":{"n":123456789012345678901234567890}}})"})
    EXPECT_FALSE(splitWatchEvent(refused, "Pod", split)) << refused;
}

}  // namespace
}  // namespace rayjournal::model
