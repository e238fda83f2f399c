#include "CacheSizeBench.h"

#include <chrono>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>

#include "controller/raycluster/CachedPod.h"

namespace rayjournal::bench {
namespace {

using nlohmann::json;

// libstdc++'s sizes on 64-bit Linux: a red-black tree node is 32 bytes before its value.
constexpr size_t kValue = sizeof(json), kString = sizeof(std::string), kMapNode = 32;
constexpr size_t kMap = sizeof(json::object_t), kVector = sizeof(json::array_t);

size_t stringHeap(const std::string& s) { return s.size() > 15 ? s.size() + 1 : 0; }

// What a value owns beyond its own 16 bytes.
size_t ownedBytes(const json& v) {
  size_t bytes = 0;
  if (v.is_object()) {
    bytes += kMap;
    for (const auto& [key, child] : v.get_ref<const json::object_t&>())
      bytes += kMapNode + kString + stringHeap(key) + kValue + ownedBytes(child);
  } else if (v.is_array()) {
    const auto& items = v.get_ref<const json::array_t&>();
    bytes += kVector + items.capacity() * kValue;
    for (const auto& child : items) bytes += ownedBytes(child);
  } else if (v.is_string()) {
    bytes += kString + stringHeap(v.get_ref<const std::string&>());
  }
  return bytes;
}

// The object as the cache would be handed it: managedFields dropped, a Pod slimmed.
json cachedForm(json object) {
  if (auto meta = object.find("metadata"); meta != object.end() && meta->is_object())
    meta->erase("managedFields");
  if (object.value("kind", "") != "Pod") return object;
  return *controller::podAsCached(std::make_shared<const json>(std::move(object)));
}

std::map<std::string, std::vector<json>> objectsByKind(const std::vector<std::string>& files) {
  std::map<std::string, std::vector<json>> kinds;
  for (const auto& file : files) {
    std::ifstream in(file);
    if (!in) throw std::runtime_error("cache-size: cannot open the stream " + file);
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      json event = json::parse(line);
      json object = event.contains("object") ? event["object"] : event;
      std::string kind = object.value("kind", "");
      if (!kind.empty()) kinds[kind].push_back(cachedForm(std::move(object)));
    }
  }
  if (kinds.empty()) throw std::runtime_error("cache-size: the streams hold no objects");
  return kinds;
}

double bestReadSeconds(const std::vector<std::vector<uint8_t>>& packed, int repeat) {
  double best = std::numeric_limits<double>::max();
  size_t sink = 0;
  for (int pass = 0; pass < std::max(1, repeat); ++pass) {
    auto start = std::chrono::steady_clock::now();
    for (const auto& bytes : packed) sink += json::from_cbor(bytes).size();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  if (sink == 0) throw std::runtime_error("cache-size: decoded nothing");
  return best;
}

json measureKind(const std::vector<json>& objects, int repeat) {
  size_t text = 0, document = 0, cbor = 0;
  std::vector<std::vector<uint8_t>> packed;
  for (const auto& o : objects) {
    text += o.dump().size();
    document += documentBytes(o);
    packed.push_back(json::to_cbor(o));
    cbor += packed.back().size();
  }
  double n = double(objects.size());
  return {{"objects", objects.size()},
          {"json_text_bytes", text / n},
          {"document_bytes", document / n},
          {"packed_bytes", cbor / n},
          {"packed_over_document", double(cbor) / double(document)},
          {"packed_read_us", bestReadSeconds(packed, repeat) * 1e6 / n}};
}

}  // namespace

size_t documentBytes(const json& document) { return kValue + ownedBytes(document); }

json runCacheSize(const CacheSizeOptions& options) {
  json kinds = json::object();
  for (const auto& [kind, objects] : objectsByKind(options.streams))
    kinds[kind] = measureKind(objects, options.repeat);
  return {{"benchmark", "cache-size"}, {"repeat", options.repeat}, {"kinds", kinds}};
}

}  // namespace rayjournal::bench
