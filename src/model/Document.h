// API documents as the decision logic carries them without reading them. The state machines work
// on typed views (controller/Views.h); the parts of a document nobody models (a Pod template, a
// status copied from a RayCluster into its RayJob) travel beside them as Documents, and the
// objects a decision wants written travel as ApiObjects. Only boundary code (parsing, builders,
// the Executor) includes the JSON library and looks inside.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>

namespace rayjournal::model {

// Shared and immutable; compared by value. Default: null.
class Document {
 public:
  Document();
  explicit Document(nlohmann::json value);
  explicit Document(std::shared_ptr<const nlohmann::json> shared);
  const nlohmann::json& get() const;
  const std::shared_ptr<const nlohmann::json>& shared() const { return value_; }
  bool isNull() const;
  bool operator==(const Document& other) const;

 private:
  std::shared_ptr<const nlohmann::json> value_;
};

// An object the decision wants created, updated or written (owned; the Executor moves it into
// the API call).
using ApiObject = std::shared_ptr<nlohmann::json>;

}  // namespace rayjournal::model
