// The checker for DESIGN's first invariant, "no side effect was executed without a durable
// intent journaled before it" (one checker per invariant family, as TigerBeetle's VOPR). It sees
// the journal from the outside (every appended record, and the storage's durable image) and the
// world from the outside (every write the operator's clients make, through OperatorPort), so a
// side effect that bypasses the Executor fails the run, not only one the Executor mis-orders.
// An operator write is covered when an intent for that action and target was appended, has no
// outcome yet, and is durable at that moment. Single-threaded use.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "events/EventCodec.h"
#include "wal/MemoryStorage.h"
#include "wal/Record.h"
#include "wal/RecordCodec.h"

namespace rayjournal::testing {

class EffectChecker {
 public:
  explicit EffectChecker(std::shared_ptr<wal::MemoryStorage> storage)
      : storage_(std::move(storage)) {}

  // Every record the journal appended (StackOptions::onJournaled).
  void journaled(const wal::Record& r) {
    if (r.type == wal::RecordType::Intent) {
      events::IntentBody intent = events::decodeIntent(r);
      open_[{events::actionName(intent.action), intent.target}].insert(r.seq);
      kindOf_[r.seq] = r.object.kind;
    } else if (r.type == wal::RecordType::Outcome) {
      events::OutcomeBody outcome = events::decodeOutcome(r);
      auto it = open_.find({events::actionName(outcome.action), outcome.target});
      if (it != open_.end()) it->second.erase(outcome.intentSeq);
    }
  }
  // A crash: intents appended but not durable are gone with the process (and maybe the disk).
  void crashed() { open_.clear(); }

  // Every write the operator made (OperatorPort's observer).
  void wrote(const std::string& verb, const std::string& kind, const std::string& ns,
             const std::string& name) {
    ++writes_;
    for (const auto& action : actionsFor(verb, kind)) {
      auto it = open_.find({action, name});
      if (it == open_.end()) continue;
      for (uint64_t seq : it->second) {
        if (verb == "updateStatus" && kindOf_[seq] != kind) continue;
        if (storage_->isDurable(wal::Column::Records, wal::encodeSeqKey(seq))) return;
      }
    }
    violations_.push_back(verb + " " + kind + " " + ns + "/" + name +
                          " reached the world without a durable intent before it");
  }

  const std::vector<std::string>& violations() const { return violations_; }
  void clearViolations() { violations_.clear(); }
  uint64_t writesChecked() const { return writes_; }

 private:
  static std::vector<std::string> actionsFor(const std::string& verb, const std::string& kind) {
    if (verb == "submit") return {"SubmitRayJob"};
    if (verb == "stop") return {"StopRayJob"};
    if (verb == "updateStatus") return {"WriteStatus"};
    if (verb == "update") {
      if (kind == "RayJob") return {"AddFinalizer", "RemoveFinalizer"};
      if (kind == "RayCluster") return {"SuspendWorkerGroups", "AddFinalizer", "RemoveFinalizer"};
      if (kind == "Service") return {"UpdateHeadService"};
      if (kind == "PodGroup") return {"UpdatePodGroup"};
      return {};
    }
    static const std::map<std::string, std::string> kChild{{"RayCluster", "RayCluster"},
                                                           {"Job", "SubmitterJob"},
                                                           {"Pod", "Pod"},
                                                           {"Secret", "Secret"},
                                                           {"ServiceAccount", "ServiceAccount"},
                                                           {"Role", "Role"},
                                                           {"RoleBinding", "RoleBinding"},
                                                           {"PersistentVolumeClaim", "PersistentVolumeClaim"},
                                                           {"PodGroup", "PodGroup"},
                                                           {"RayJob", "RayJob"}};
    if (verb == "create" && kind == "Service") return {"CreateService", "CreateHeadService"};
    if (verb == "create" && kind == "Job") return {"CreateSubmitterJob", "CreateRedisCleanupJob"};
    auto child = kChild.find(kind);
    if (child == kChild.end()) return {};
    return {(verb == "create" ? "Create" : "Delete") + child->second};
  }

  std::shared_ptr<wal::MemoryStorage> storage_;
  std::map<std::pair<std::string, std::string>, std::set<uint64_t>> open_;
  std::map<uint64_t, std::string> kindOf_;
  std::vector<std::string> violations_;
  uint64_t writes_ = 0;
};

}  // namespace rayjournal::testing
