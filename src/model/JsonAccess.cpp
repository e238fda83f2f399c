#include "model/JsonAccess.h"

namespace rayjournal::model {
namespace {

const json* member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

}  // namespace

const json& memberAt(const json& object, const char* key) {
  static const json null;
  const json* m = member(object, key);
  return m ? *m : null;
}

const json& objectAt(const json& object, const char* key) {
  static const json empty = json::object();
  const json* m = member(object, key);
  return m && m->is_object() ? *m : empty;
}

const json& arrayAt(const json& object, const char* key) {
  static const json empty = json::array();
  const json* m = member(object, key);
  return m && m->is_array() ? *m : empty;
}

const std::string& stringAt(const json& object, const char* key) {
  static const std::string empty;
  const json* m = member(object, key);
  return m && m->is_string() ? m->get_ref<const std::string&>() : empty;
}

}  // namespace rayjournal::model
