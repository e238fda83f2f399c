#include "DecodeBench.h"

#include <simdjson.h>

#include <chrono>
#include <fstream>
#include <limits>
#include <stdexcept>

#include "model/ApiJson.h"
#include "model/WatchHead.h"

namespace rayjournal::bench {
namespace {

using model::ObjectHead;
using model::OwnerHead;
using model::WatchHead;
namespace od = simdjson::ondemand;

std::vector<std::string> readEvents(const std::vector<std::string>& files) {
  std::vector<std::string> events;
  for (const auto& file : files) {
    std::ifstream in(file);
    if (!in) throw std::runtime_error("decode: cannot open the stream " + file);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) events.push_back(std::move(line));
  }
  if (events.empty()) throw std::runtime_error("decode: the streams hold no events");
  return events;
}

std::string text(od::value v) {
  if (v.type() != od::json_type::string) return "";
  return std::string(std::string_view(v.get_string()));
}

OwnerHead ownerOf(od::object ref) {
  OwnerHead owner;
  for (auto field : ref) {
    std::string_view key = field.unescaped_key();
    od::value v = field.value();
    if (key == "kind") owner.kind = text(v);
    else if (key == "name") owner.name = text(v);
    else if (key == "uid") owner.uid = text(v);
    else if (key == "controller" && v.type() == od::json_type::boolean) owner.controller = v.get_bool();
  }
  return owner;
}

void metadataOf(od::object meta, ObjectHead& o) {
  for (auto field : meta) {
    std::string_view key = field.unescaped_key();
    od::value v = field.value();
    if (key == "name") o.name = text(v);
    else if (key == "namespace") o.ns = text(v);
    else if (key == "uid") o.uid = text(v);
    else if (key == "resourceVersion") o.resourceVersion = text(v);
    else if (key == "deletionTimestamp") o.deletionTimestamp = text(v);
    else if (key == "generation" && v.type() == od::json_type::number) o.generation = v.get_int64();
    else if (key == "labels" && v.type() == od::json_type::object) {
      for (auto label : v.get_object()) {
        std::string_view name = label.unescaped_key();
        od::value value = label.value();
        if (value.type() == od::json_type::string) o.labels.emplace_back(name, text(value));
      }
    } else if (key == "ownerReferences" && v.type() == od::json_type::array) {
      for (od::value ref : v.get_array())
        if (ref.type() == od::json_type::object) o.owners.push_back(ownerOf(ref.get_object()));
    }
  }
  std::stable_sort(o.labels.begin(), o.labels.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
}

void objectOf(od::object object, ObjectHead& o) {
  for (auto field : object) {
    std::string_view key = field.unescaped_key();
    od::value v = field.value();
    if (key == "kind") o.kind = text(v);
    else if (key == "metadata" && v.type() == od::json_type::object) metadataOf(v.get_object(), o);
    else if (key == "status" && v.type() == od::json_type::object) {
      for (auto s : v.get_object())
        if (std::string_view(s.unescaped_key()) == "phase") o.phase = text(s.value());
    }
  }
}

// simdjson's On-Demand API: the event is walked once, in document order, and only the fields a
// WatchHead holds are materialised.
WatchHead simdjsonHead(od::parser& parser, const simdjson::padded_string& line) {
  WatchHead head;
  od::document doc = parser.iterate(line);
  for (auto field : doc.get_object()) {
    std::string_view key = field.unescaped_key();
    od::value v = field.value();
    if (key == "type") head.type = text(v);
    else if (key == "object" && v.type() == od::json_type::object) objectOf(v.get_object(), head.object);
  }
  return head;
}

template <class Decode>
nlohmann::json timeDecoder(const std::vector<std::string>& events, int repeat,
                           const std::vector<WatchHead>& expected, Decode&& decode) {
  double best = std::numeric_limits<double>::max();
  size_t disagreements = 0, bytes = 0;
  for (const auto& e : events) bytes += e.size();
  for (int pass = 0; pass < std::max(1, repeat); ++pass) {
    auto start = std::chrono::steady_clock::now();
    size_t wrong = 0;
    for (size_t i = 0; i < events.size(); ++i)
      if (!(decode(i) == expected[i])) ++wrong;
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    disagreements = wrong;
  }
  return {{"best_pass_seconds", best},
          {"ns_per_event", best * 1e9 / double(events.size())},
          {"mb_per_second", double(bytes) / best / 1e6},
          {"events_not_equal_to_dom", disagreements}};
}

// The best of `repeat` passes of decode over every event, in ns per event.
template <class Decode>
double bestNsPerEvent(const std::vector<std::string>& events, int repeat, Decode&& decode) {
  double seconds = std::numeric_limits<double>::max();
  for (int pass = 0; pass < std::max(1, repeat); ++pass) {
    auto start = std::chrono::steady_clock::now();
    for (const auto& e : events) decode(e);
    seconds = std::min(
        seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return seconds * 1e9 / double(events.size());
}

// The whole document as the operator's watch builds it (managedFields left out): nlohmann's
// parser and an erase, as before, against model::parseApiJson (simdjson's index, then one walk).
nlohmann::json timeDocuments(const std::vector<std::string>& events, int repeat) {
  size_t unequal = 0;
  for (const auto& e : events) {
    nlohmann::json expected = nlohmann::json::parse(e);
    expected["object"]["metadata"].erase("managedFields");
    unequal += model::parseApiJson(e, model::ApiShape::WatchEvent) != expected;
  }
  const double nlohmannNs = bestNsPerEvent(events, repeat, [](const std::string& e) {
    nlohmann::json doc = nlohmann::json::parse(e);
    doc["object"]["metadata"].erase("managedFields");
  });
  const double simdNs = bestNsPerEvent(
      events, repeat, [](const std::string& e) { model::parseApiJson(e, model::ApiShape::WatchEvent); });
  return {{"nlohmann_parse_ns_per_event", nlohmannNs},
          {"parse_api_json_ns_per_event", simdNs},
          {"parse_api_json_over_nlohmann_time", simdNs / nlohmannNs},
          {"documents_not_equal", unequal}};
}

// A packed kind's watch event to what the informer cache keeps (the object's CBOR) and what its
// listeners hear: the whole document, then its encoding (before), against model::splitWatchEvent
// (the encoding straight from simdjson's index, and a document of the head alone). Each pass
// also destroys what it built, as the operator does after the listeners ran.
nlohmann::json timeCacheEntries(const std::vector<std::string>& events, int repeat) {
  size_t unequal = 0, split = 0;
  for (const auto& e : events) {
    nlohmann::json whole = model::parseApiJson(e, model::ApiShape::WatchEvent)["object"];
    whole["kind"] = "Recorded";
    model::SplitWatchEvent event;
    split += model::splitWatchEvent(e, "Recorded", event);
    unequal += nlohmann::json::from_cbor(event.object.encoded) != whole;
  }
  const double documentNs = bestNsPerEvent(events, repeat, [](const std::string& e) {
    nlohmann::json doc = model::parseApiJson(e, model::ApiShape::WatchEvent);
    doc["object"]["kind"] = "Recorded";
    const auto bytes = nlohmann::json::to_cbor(doc["object"]);
    return bytes.size();
  });
  const double splitNs = bestNsPerEvent(events, repeat, [](const std::string& e) {
    model::SplitWatchEvent event;
    model::splitWatchEvent(e, "Recorded", event);
    return event.object.encoded.size();
  });
  return {{"document_then_cbor_ns_per_event", documentNs},
          {"split_ns_per_event", splitNs},
          {"split_over_document_time", splitNs / documentNs},
          {"events_split", split},
          {"encodings_not_equal", unequal}};
}

}  // namespace

nlohmann::json runDecode(const DecodeOptions& options) {
  const std::vector<std::string> events = readEvents(options.streams);
  std::vector<WatchHead> expected;
  size_t bytes = 0;
  for (const auto& e : events) {
    expected.push_back(model::watchHeadOf(nlohmann::json::parse(e)));
    bytes += e.size();
  }
  auto dom = timeDecoder(events, options.repeat, expected, [&](size_t i) {
    return model::watchHeadOf(nlohmann::json::parse(events[i]));
  });
  auto sax = timeDecoder(events, options.repeat, expected, [&](size_t i) {
    WatchHead head;
    model::decodeWatchHead(events[i], head);
    return head;
  });
  std::vector<simdjson::padded_string> padded(events.begin(), events.end());
  od::parser parser;
  auto simd = timeDecoder(events, options.repeat, expected,
                          [&](size_t i) { return simdjsonHead(parser, padded[i]); });
  const double domNs = dom["ns_per_event"];
  const auto documents = timeDocuments(events, options.repeat);
  return {{"benchmark", "decode"},
          {"events", events.size()},
          {"bytes", bytes},
          {"mean_event_bytes", bytes / events.size()},
          {"repeat", options.repeat},
          {"nlohmann_dom", dom},
          {"nlohmann_sax", sax},
          {"simdjson_ondemand", simd},
          {"sax_over_dom_time", sax["ns_per_event"].get<double>() / domNs},
          {"simdjson_over_dom_time", simd["ns_per_event"].get<double>() / domNs},
          {"documents", documents},
          {"cache_entries", timeCacheEntries(events, options.repeat)}};
}

}  // namespace rayjournal::bench
