#include "runtime/Handlers.h"

namespace rayjournal::runtime {
namespace {

using nlohmann::json;

const std::string& stringField(const json& object, const char* key) {
  static const std::string none;
  if (!object.is_object()) return none;
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get_ref<const std::string&>() : none;
}

const json& metadataOf(const json& object) {
  static const json empty = json::object();
  if (!object.is_object()) return empty;
  auto it = object.find("metadata");
  return it != object.end() && it->is_object() ? *it : empty;
}

std::string namespaceOf(const json& meta) {
  const std::string& ns = stringField(meta, "namespace");
  return ns.empty() ? "default" : ns;
}

}  // namespace

std::string keyOfObject(const json& object) {
  const json& meta = metadataOf(object);
  const std::string& name = stringField(meta, "name");
  return name.empty() ? "" : namespaceOf(meta) + "/" + name;
}

std::string keyOfControllerOwner(const json& object, const std::string& ownerKind) {
  const json& meta = metadataOf(object);
  auto refs = meta.find("ownerReferences");
  if (refs == meta.end() || !refs->is_array()) return "";
  for (const auto& ref : *refs) {
    if (stringField(ref, "kind") != ownerKind) continue;
    auto controller = ref.find("controller");
    if (controller == ref.end() || *controller != true) continue;
    const std::string& name = stringField(ref, "name");
    if (!name.empty()) return namespaceOf(meta) + "/" + name;
  }
  return "";
}

std::string keyOfLabel(const json& object, const std::string& label) {
  const json& meta = metadataOf(object);
  auto labels = meta.find("labels");
  if (labels == meta.end() || !labels->is_object()) return "";
  const std::string& value = stringField(*labels, label.c_str());
  return value.empty() ? "" : namespaceOf(meta) + "/" + value;
}

}  // namespace rayjournal::runtime
