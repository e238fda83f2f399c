#include "runtime/PlannedReconciler.h"

#include <spdlog/spdlog.h>

#include "wal/JournalError.h"

namespace rayjournal::runtime {

Result PlannedReconciler::reconcile(const std::string& key) {
  return reconcileMany({key}).front();
}

std::vector<Result> PlannedReconciler::reconcileMany(const std::vector<std::string>& keys) {
  std::vector<Result> results(keys.size());
  std::vector<Decision> decided;
  decided.reserve(keys.size());  // the Executor holds pointers into it
  std::vector<size_t> keyOf;
  for (size_t i = 0; i < keys.size(); ++i) {
    try {
      auto answer = decideKey(keys[i]);
      if (auto* early = std::get_if<Result>(&answer)) {
        results[i] = *early;
        continue;
      }
      decided.push_back(std::move(std::get<Decision>(answer)));
      warnIgnoredFields(decided.back());
      keyOf.push_back(i);
    } catch (const wal::JournalFullError& e) {
      spdlog::debug("{} {}: deferred, the journal cannot be written: {}", kind_, keys[i], e.what());
      results[i] = {true, std::nullopt, false};
    } catch (const std::exception& e) {
      spdlog::error("{} {}: reconcile failed: {}", kind_, keys[i], e.what());
      results[i] = {true, std::nullopt, false};
    }
  }
  std::vector<controller::Executor::Decision> plans;
  for (auto& d : decided) plans.push_back({&d.subject, &d.plan});
  std::vector<controller::ExecResult> executed = executor_.executeAll(plans);
  for (size_t j = 0; j < decided.size(); ++j)
    results[keyOf[j]] = finish(keys[keyOf[j]], decided[j], executed[j]);
  return results;
}

// Journaled with the decision's other facts, first; the Event (which the Executor also logs at
// warning level) goes out at once, as the decision's own Warnings do.
void PlannedReconciler::warnIgnoredFields(Decision& d) {
  if (!fieldWarnings_) return;
  for (auto& field : fieldWarnings_->fresh(d.subject)) {
    executor_.postEvent(d.subject, fieldNotImplementedNote(field));
    d.plan.observations.push_back(std::move(field));
  }
}

Result PlannedReconciler::finish(const std::string& key, const Decision& d,
                                 const controller::ExecResult& exec) {
  if (!exec.ok) {
    spdlog::warn("{} {}: {} (will retry with backoff)", kind_, key, exec.error);
    return {true, std::nullopt, false};
  }
  return {false, d.plan.requeueAfterMs, d.atRest};
}

}  // namespace rayjournal::runtime
