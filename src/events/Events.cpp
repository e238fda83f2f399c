#include "events/Events.h"

#include <array>
#include <string>

namespace rayjournal::events {
namespace {

// Indexed by the enum's value; the names are the journal encoding, never change one.
const std::array<std::string, 24> kActionNames{
    "AddFinalizer",      "RemoveFinalizer",   "CreateRayCluster",   "CreateSubmitterJob",
    "SubmitRayJob",      "StopRayJob",        "DeleteRayCluster",   "DeleteSubmitterJob",
    "DeleteRayJob",      "SuspendWorkerGroups", "CreateHeadService", "UpdateHeadService",
    "WriteStatus",       "CreateService",     "CreatePod",          "DeletePod",
    "CreateSecret",      "CreateServiceAccount", "CreateRole",       "CreateRoleBinding",
    "CreateRedisCleanupJob", "CreatePersistentVolumeClaim", "CreatePodGroup", "UpdatePodGroup"};
const std::array<std::string, 8> kResultNames{"ok",    "adopted", "already_done", "error",
                                              "abandoned", "found", "absent",     "superseded"};
const std::string kUnknown = "unknown";

template <typename Enum, size_t N>
const std::string& nameIn(const std::array<std::string, N>& names, Enum value) {
  size_t i = static_cast<size_t>(value);
  return i < N ? names[i] : kUnknown;
}

template <typename Enum, size_t N>
std::optional<Enum> valueIn(const std::array<std::string, N>& names, std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == name) return static_cast<Enum>(i);
  return std::nullopt;
}

}  // namespace

const std::string& actionName(Action action) {
  return nameIn(kActionNames, action);
}
std::optional<Action> actionFromName(std::string_view name) {
  return valueIn<Action>(kActionNames, name);
}
const std::string& resultName(Result result) {
  return nameIn(kResultNames, result);
}
std::optional<Result> resultFromName(std::string_view name) {
  return valueIn<Result>(kResultNames, name);
}

bool landed(Result result) {
  return result == Result::Ok || result == Result::Adopted || result == Result::AlreadyDone ||
         result == Result::Found;
}

bool isResolution(Result result) {
  return result == Result::Found || result == Result::Absent || result == Result::Superseded;
}

std::string_view observationName(const Observation& observation) {
  struct Names {
    std::string_view operator()(const AttemptStarted&) const { return "AttemptStarted"; }
    std::string_view operator()(const RayJobTerminal&) const { return "RayJobTerminal"; }
    std::string_view operator()(const Drift&) const { return "Drift"; }
    std::string_view operator()(const ChildMissing&) const { return "ChildMissing"; }
    std::string_view operator()(const SubmissionSeen&) const { return "SubmissionSeen"; }
    std::string_view operator()(const JournalSalvaged&) const { return "JournalSalvaged"; }
    std::string_view operator()(const SpecChanged&) const { return "SpecChanged"; }
    std::string_view operator()(const FieldIgnored&) const { return "FieldIgnored"; }
  };
  return std::visit(Names{}, observation);
}

}  // namespace rayjournal::events
