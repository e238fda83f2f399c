#include "model/WatchHead.h"

#include <algorithm>

#include "model/JsonAccess.h"

namespace rayjournal::model {
namespace {

// One order for both decoders (a parsed document keeps an object's keys sorted; the bytes do
// not), the last of a repeated key winning, as in a parsed document.
void settleLabels(std::vector<std::pair<std::string, std::string>>& labels) {
  std::stable_sort(labels.begin(), labels.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::pair<std::string, std::string>> unique;
  unique.reserve(labels.size());
  for (auto& label : labels) {
    if (!unique.empty() && unique.back().first == label.first)
      unique.back() = std::move(label);
    else
      unique.push_back(std::move(label));
  }
  labels = std::move(unique);
}

OwnerHead ownerOf(const json& ref) {
  const json& controller = memberAt(ref, "controller");
  return {stringAt(ref, "kind"), stringAt(ref, "name"), stringAt(ref, "uid"),
          controller.is_boolean() && controller.get<bool>()};
}

}  // namespace

WatchHead watchHeadOf(const json& event) {
  WatchHead head;
  head.type = stringAt(event, "type");
  const json& object = objectAt(event, "object");
  const json& meta = objectAt(object, "metadata");
  ObjectHead& o = head.object;
  o.kind = stringAt(object, "kind");
  o.name = stringAt(meta, "name");
  o.ns = stringAt(meta, "namespace");
  o.uid = stringAt(meta, "uid");
  o.resourceVersion = stringAt(meta, "resourceVersion");
  o.deletionTimestamp = stringAt(meta, "deletionTimestamp");
  const json& generation = memberAt(meta, "generation");
  if (generation.is_number_integer()) o.generation = generation.get<int64_t>();
  for (const auto& [key, value] : objectAt(meta, "labels").items())
    if (value.is_string()) o.labels.emplace_back(key, value.get<std::string>());
  settleLabels(o.labels);
  for (const json& ref : arrayAt(meta, "ownerReferences"))
    if (ref.is_object()) o.owners.push_back(ownerOf(ref));
  o.phase = stringAt(objectAt(object, "status"), "phase");
  return head;
}

namespace {

// Where a container sits in a watch event; everything else is skipped.
enum class Where { Event, Object, Metadata, Labels, Owners, Owner, Status, Other };

struct Frame {
  Where where;
  bool array;
  std::string key;  // the current member's key (objects)
};

// nlohmann's SAX interface: every value arrives with the path known from the frames, and only
// the members a WatchHead holds are kept.
class HeadSax {
 public:
  explicit HeadSax(WatchHead& out) : out_(out) {}
  std::string error;

  bool null() { return scalar(); }
  bool boolean(bool value) {
    if (at(Where::Owner, "controller")) out_.object.owners.back().controller = value;
    return scalar();
  }
  bool number_integer(json::number_integer_t value) {
    if (at(Where::Metadata, "generation")) out_.object.generation = value;
    return scalar();
  }
  bool number_unsigned(json::number_unsigned_t value) {
    if (at(Where::Metadata, "generation")) out_.object.generation = int64_t(value);
    return scalar();
  }
  bool number_float(json::number_float_t, const std::string&) { return scalar(); }
  bool binary(json::binary_t&) { return scalar(); }
  bool string(std::string& value) {
    if (std::string* field = stringField()) *field = std::move(value);
    return scalar();
  }
  bool key(std::string& key) {
    frames_.back().key = std::move(key);
    return true;
  }
  bool start_object(std::size_t) { return open(false); }
  bool start_array(std::size_t) { return open(true); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    error = "at byte " + std::to_string(position) + ": " + e.what();
    return false;
  }

 private:
  bool at(Where where, const char* key) const {
    return !frames_.empty() && frames_.back().where == where && frames_.back().key == key;
  }
  bool scalar() {
    if (!frames_.empty()) return true;
    error = "a watch event is a JSON object, not a scalar";
    return false;
  }
  std::string* stringField();
  Where childOf(const Frame& parent, bool array) const;
  bool open(bool array);
  bool close() {
    frames_.pop_back();
    return true;
  }

  WatchHead& out_;
  std::vector<Frame> frames_;
};

std::string* HeadSax::stringField() {
  if (frames_.empty()) return nullptr;
  const Frame& f = frames_.back();
  ObjectHead& o = out_.object;
  switch (f.where) {
    case Where::Event: return f.key == "type" ? &out_.type : nullptr;
    case Where::Object: return f.key == "kind" ? &o.kind : nullptr;
    case Where::Status: return f.key == "phase" ? &o.phase : nullptr;
    case Where::Labels: return &o.labels.emplace_back(f.key, "").second;
    case Where::Owner: {
      OwnerHead& owner = o.owners.back();
      if (f.key == "kind") return &owner.kind;
      if (f.key == "name") return &owner.name;
      return f.key == "uid" ? &owner.uid : nullptr;
    }
    case Where::Metadata:
      if (f.key == "name") return &o.name;
      if (f.key == "namespace") return &o.ns;
      if (f.key == "uid") return &o.uid;
      if (f.key == "resourceVersion") return &o.resourceVersion;
      return f.key == "deletionTimestamp" ? &o.deletionTimestamp : nullptr;
    default: return nullptr;
  }
}

Where HeadSax::childOf(const Frame& parent, bool array) const {
  const std::string& key = parent.key;
  switch (parent.where) {
    case Where::Event: return !array && key == "object" ? Where::Object : Where::Other;
    case Where::Object:
      if (array) return Where::Other;
      return key == "metadata" ? Where::Metadata : key == "status" ? Where::Status : Where::Other;
    case Where::Metadata:
      if (key == "labels") return array ? Where::Other : Where::Labels;
      return array && key == "ownerReferences" ? Where::Owners : Where::Other;
    case Where::Owners: return array ? Where::Other : Where::Owner;
    default: return Where::Other;
  }
}

bool HeadSax::open(bool array) {
  if (frames_.empty()) {
    if (array) {
      error = "a watch event is a JSON object, not an array";
      return false;
    }
    frames_.push_back({Where::Event, false, {}});
    return true;
  }
  if (frames_.size() >= size_t(kMaxWatchHeadDepth)) {
    error = "nested deeper than " + std::to_string(kMaxWatchHeadDepth) + " levels";
    return false;
  }
  Where where = childOf(frames_.back(), array);
  if (where == Where::Owner) out_.object.owners.emplace_back();
  frames_.push_back({where, array, {}});
  return true;
}

}  // namespace

bool decodeWatchHead(std::string_view line, WatchHead& out, std::string* error) {
  out = WatchHead{};
  HeadSax sax(out);
  bool ok = json::sax_parse(line.begin(), line.end(), &sax);
  if (ok) {
    settleLabels(out.object.labels);
    return true;
  }
  if (error) *error = sax.error.empty() ? "not a JSON object" : sax.error;
  return false;
}

}  // namespace rayjournal::model
