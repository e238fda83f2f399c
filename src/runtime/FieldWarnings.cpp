#include "runtime/FieldWarnings.h"

#include "controller/FieldSupport.h"

namespace rayjournal::runtime {

namespace {
constexpr size_t kMaxPending = 100000;  // bounded; at worst one more warning after a clear
}

std::vector<events::FieldIgnored> FieldWarnings::fresh(const controller::Subject& subject) {
  if (!subject.raw) return {};
  std::vector<controller::IgnoredField> set = controller::ignoredFieldsOf(subject.kind, *subject.raw);
  if (set.empty()) return {};
  std::set<std::string> warned = projection_.ignoredFields(subject.kind, subject.key(), subject.uid);
  std::vector<events::FieldIgnored> out;
  std::lock_guard lock(mu_);
  if (pending_.size() > kMaxPending) pending_.clear();
  for (auto& field : set) {
    if (warned.count(field.path) || !pending_.insert(subject.uid + " " + field.path).second) continue;
    ++counts_[{subject.kind, field.path}];
    out.push_back({std::move(field.path), std::move(field.instead)});
  }
  return out;
}

std::map<std::pair<std::string, std::string>, uint64_t> FieldWarnings::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

controller::EventNote fieldNotImplementedNote(const events::FieldIgnored& field) {
  return {"Warning", "FieldNotImplemented",
          field.path + " is set, but rayjournal does not implement it: " + field.instead,
          "Reconcile"};
}

}  // namespace rayjournal::runtime
