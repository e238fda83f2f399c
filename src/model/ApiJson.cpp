#include "model/ApiJson.h"

#include <simdjson.h>

#include <memory>

#include "model/CborWriter.h"

namespace rayjournal::model {
namespace {

using nlohmann::json;
namespace dom = simdjson::dom;

// What a value is to the API: where managedFields are left out.
enum class Role { Plain, ApiObject, Metadata, List, WatchEvent };

// A List's "items" keeps the List role: its array's elements are then API objects.
Role roleOfMember(Role parent, std::string_view key) {
  switch (parent) {
    case Role::List:
      if (key == "items") return Role::List;
      [[fallthrough]];
    case Role::ApiObject:
      return key == "metadata" ? Role::Metadata : Role::Plain;
    case Role::WatchEvent:
      return key == "object" ? Role::ApiObject : Role::Plain;
    default:
      return Role::Plain;
  }
}

json build(dom::element e, Role role);

json buildObject(dom::object object, Role role) {
  json out = json::object();
  json::object_t& members = out.get_ref<json::object_t&>();
  for (dom::key_value_pair field : object) {
    if (role == Role::Metadata && field.key == "managedFields") continue;
    members.insert_or_assign(std::string(field.key),
                             build(field.value, roleOfMember(role, field.key)));
  }
  return out;
}

json buildArray(dom::array array, Role role) {
  json out = json::array();
  json::array_t& items = out.get_ref<json::array_t&>();
  items.reserve(array.size());
  const Role item = role == Role::List ? Role::ApiObject : Role::Plain;
  for (dom::element e : array) items.push_back(build(e, item));
  return out;
}

json build(dom::element e, Role role) {
  switch (e.type()) {
    case dom::element_type::OBJECT:
      return buildObject(e.get_object().value_unsafe(), role);
    case dom::element_type::ARRAY:
      return buildArray(e.get_array().value_unsafe(), role);
    case dom::element_type::STRING:
      return std::string(e.get_string().value_unsafe());
    case dom::element_type::INT64: {
      // nlohmann reads a non-negative integer as unsigned: the same document, type for type.
      const int64_t v = e.get_int64().value_unsafe();
      return v >= 0 ? json(static_cast<uint64_t>(v)) : json(v);
    }
    case dom::element_type::UINT64:
      return e.get_uint64().value_unsafe();
    case dom::element_type::DOUBLE:
      return e.get_double().value_unsafe();
    case dom::element_type::BOOL:
      return e.get_bool().value_unsafe();
    case dom::element_type::NULL_VALUE:
      return nullptr;
  }
  return nullptr;
}

Role rootRole(ApiShape shape) {
  switch (shape) {
    case ApiShape::Object:
      return Role::ApiObject;
    case ApiShape::List:
      return Role::List;
    case ApiShape::WatchEvent:
      return Role::WatchEvent;
    default:
      return Role::Plain;
  }
}

void dropManagedFieldsOf(json& object) {
  if (!object.is_object()) return;
  auto meta = object.find("metadata");
  if (meta != object.end() && meta->is_object()) meta->erase("managedFields");
}

// The bytes simdjson refused, parsed as they always were, less the same members.
json parsedByNlohmann(std::string_view bytes, ApiShape shape) {
  json doc = json::parse(bytes, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return doc;
  if (shape == ApiShape::Object || shape == ApiShape::List) dropManagedFieldsOf(doc);
  if (shape == ApiShape::WatchEvent)
    if (auto o = doc.find("object"); o != doc.end()) dropManagedFieldsOf(*o);
  if (auto items = doc.find("items"); shape == ApiShape::List && items != doc.end() &&
                                      items->is_array())
    for (json& item : *items) dropManagedFieldsOf(item);
  return doc;
}

// The parser this thread keeps, or for large bytes one of their own held by `own`.
dom::parser& parserFor(std::string_view bytes, std::unique_ptr<dom::parser>& own) {
  thread_local dom::parser kept;
  if (bytes.size() <= kKeptParserBytes) return kept;
  own = std::make_unique<dom::parser>();
  return *own;
}

void writeMetadata(CborWriter& cbor, dom::element metadata) {
  dom::object members;
  if (metadata.get_object().get(members) != simdjson::SUCCESS) return cbor.value(metadata);
  uint64_t kept = 0;
  for (dom::key_value_pair field : members) kept += field.key != "managedFields";
  cbor.head(CborWriter::Major::Map, kept);
  for (dom::key_value_pair field : members) {
    if (field.key == "managedFields") continue;
    cbor.text(field.key);
    cbor.value(field.value);
  }
}

// Every member into the encoding, all but spec into the head; kind replaced in both. false when
// the head has no metadata object.
bool splitObject(dom::object object, std::string_view kind, size_t bytes, SplitObject& out) {
  uint64_t members = 1;  // kind, written last
  for (dom::key_value_pair field : object) members += field.key != "kind";
  CborWriter cbor(bytes);
  cbor.head(CborWriter::Major::Map, members);
  out.head = json::object();
  json::object_t& head = out.head.get_ref<json::object_t&>();
  for (dom::key_value_pair field : object) {
    if (field.key == "kind") continue;
    cbor.text(field.key);
    const Role role = roleOfMember(Role::ApiObject, field.key);
    role == Role::Metadata ? writeMetadata(cbor, field.value) : cbor.value(field.value);
    if (field.key != "spec")
      head.insert_or_assign(std::string(field.key), build(field.value, role));
  }
  cbor.text("kind");
  cbor.text(kind);
  head.insert_or_assign("kind", std::string(kind));
  out.encoded = cbor.take();
  auto meta = head.find("metadata");
  return meta != head.end() && meta->second.is_object();
}

// simdjson's index of the bytes, with the parser it lives in; false when refused.
bool parseBytes(std::string_view bytes, std::unique_ptr<dom::parser>& own, dom::element& root) {
  return parserFor(bytes, own).parse(bytes.data(), bytes.size(), true).get(root) ==
         simdjson::SUCCESS;
}

// The same, for bytes that must be one JSON object.
bool parseObject(std::string_view bytes, std::unique_ptr<dom::parser>& own, dom::object& object) {
  dom::element root;
  return parseBytes(bytes, own, root) && root.get_object().get(object) == simdjson::SUCCESS;
}

}  // namespace

bool splitApiObject(std::string_view bytes, std::string_view kind, SplitObject& out) {
  std::unique_ptr<dom::parser> own;
  dom::object object;
  return parseObject(bytes, own, object) && splitObject(object, kind, bytes.size(), out);
}

bool splitWatchEvent(std::string_view bytes, std::string_view kind, SplitWatchEvent& out) {
  std::unique_ptr<dom::parser> own;
  dom::object event;
  if (!parseObject(bytes, own, event)) return false;
  std::string_view type;
  dom::object object;
  bool hasObject = false;
  for (dom::key_value_pair field : event) {  // the last of a repeated key, as the document
    if (field.key == "type" && field.value.get_string().get(type) != simdjson::SUCCESS) type = {};
    if (field.key == "object")
      hasObject = field.value.get_object().get(object) == simdjson::SUCCESS;
  }
  if (!hasObject || (type != "ADDED" && type != "MODIFIED" && type != "DELETED")) return false;
  out.type = type;
  return splitObject(object, kind, bytes.size(), out.object);
}

bool buildApiJson(std::string_view bytes, ApiShape shape, json& out) {
  std::unique_ptr<dom::parser> own;
  dom::element root;
  if (!parseBytes(bytes, own, root)) return false;
  out = build(root, rootRole(shape));
  return true;
}

json parseApiJson(std::string_view bytes, ApiShape shape) {
  json doc;
  if (!buildApiJson(bytes, shape, doc)) return parsedByNlohmann(bytes, shape);
  return doc;
}

}  // namespace rayjournal::model
