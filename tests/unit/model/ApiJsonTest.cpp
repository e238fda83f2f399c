// parseApiJson must give the document nlohmann::json::parse gives, less each API object's
// managedFields: on events recorded from a real API server, and on the bytes simdjson refuses.
#include "model/ApiJson.h"

#include <gtest/gtest.h>

#include <fstream>

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
TEST(ApiJsonTest, AWatchEventIsTheDocumentNlohmannParsesLessItsManagedFields) {
  std::ifstream in(std::string(RAYJOURNAL_SOURCE_DIR) + "/bench/data/watch-stream.jsonl");
  ASSERT_TRUE(in);
  int events = 0;
  for (std::string line; std::getline(in, line); ++events) {
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
  EXPECT_GE(events, 50);
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

}  // namespace
}  // namespace rayjournal::model
