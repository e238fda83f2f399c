// How a RayJob's last written deployment status moves through the journal, and what a reused
// name does to an object's history: the per-record rules JobProjection, RunIndex and
// rayjournal-replay summary share, so that recovery, `list`, the UI and `summary` agree.
// Pure functions.
#pragma once

#include <optional>
#include <string>

#include "events/Events.h"

namespace rayjournal::projection {

// A WriteStatus that landed leaves the jobDeploymentStatus it wrote ("" when it wrote none);
// any other outcome leaves the status as it was (nullopt).
std::optional<std::string> statusAfterOutcome(events::Action intended, events::Result result,
                                              const events::StatusDigest& written);
// A Drift (Kubernetes holds another status than the journal's last write) leaves the status
// Kubernetes has; other observations leave it as it was (nullopt).
std::optional<std::string> statusAfterObservation(const events::Observation& observation);

// A record under another uid than the one the state knows starts the object's history over: a
// RayJob deleted and created again under its name is a new object. State has a `uid` member.
// Returns true when an earlier object's history was dropped.
template <class State>
bool startOverOnNewUid(State& state, const std::string& recordUid) {
  if (recordUid.empty() || state.uid == recordUid) return false;
  const bool dropped = !state.uid.empty();
  if (dropped) state = State{};
  state.uid = recordUid;
  return dropped;
}

}  // namespace rayjournal::projection
