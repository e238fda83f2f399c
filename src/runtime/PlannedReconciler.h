// The shape both of our reconcilers share: the answer for a key is a Plan that the Executor
// carries out the write-ahead way. A batch of keys is decided first, each on its own, and then
// all their plans go to the Executor together, so one fsync makes the intents of the whole batch
// durable before any of them runs (the workers wait for one disk flush per batch, not per key).
// Each key's decision is made from what was read for that key alone: keys of one batch are
// distinct objects of one kind and do not read each other's effects. Thread-safe for distinct
// keys, as the subclass's decideKey must be.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "controller/Executor.h"
#include "runtime/FieldWarnings.h"
#include "runtime/Reconciler.h"

namespace rayjournal::runtime {

class PlannedReconciler : public Reconciler {
 public:
  Result reconcile(const std::string& key) final;
  // Where decisions learn which unimplemented fields to warn about (none when unset).
  void useFieldWarnings(FieldWarnings* warnings) { fieldWarnings_ = warnings; }
  std::vector<Result> reconcileMany(const std::vector<std::string>& keys) final;

 protected:
  struct Decision {
    controller::Subject subject;
    controller::Plan plan;
    bool atRest = false;  // the key's atRest once the plan ran through
  };
  // kind names the controller in logs ("RayJob", "RayCluster").
  PlannedReconciler(controller::Executor& executor, std::string kind)
      : executor_(executor), kind_(std::move(kind)) {}
  // Reads what the key needs and decides: a Result when there is nothing to execute (gone,
  // unreadable), else the decision. A throw fails this key only.
  virtual std::variant<Result, Decision> decideKey(const std::string& key) = 0;

  controller::Executor& executor_;

 private:
  Result finish(const std::string& key, const Decision& d, const controller::ExecResult& exec);
  void warnIgnoredFields(Decision& d);

  FieldWarnings* fieldWarnings_ = nullptr;
  std::string kind_;
};

}  // namespace rayjournal::runtime
