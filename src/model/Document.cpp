#include "model/Document.h"

#include <nlohmann/json.hpp>

namespace rayjournal::model {
namespace {

const std::shared_ptr<const nlohmann::json>& null() {
  static const auto value = std::make_shared<const nlohmann::json>();
  return value;
}

}  // namespace

Document::Document() : value_(null()) {}
Document::Document(nlohmann::json value)
    : value_(std::make_shared<const nlohmann::json>(std::move(value))) {}
Document::Document(std::shared_ptr<const nlohmann::json> shared)
    : value_(shared ? std::move(shared) : null()) {}

const nlohmann::json& Document::get() const {
  return *value_;
}

bool Document::isNull() const {
  return value_->is_null();
}

bool Document::operator==(const Document& other) const {
  return value_ == other.value_ || *value_ == *other.value_;
}

}  // namespace rayjournal::model
