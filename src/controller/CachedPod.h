// What the operator keeps of a Pod in its informer cache: the fields the RayCluster and RayJob
// decisions read (RayClusterViews.cpp podView, Views.cpp headPodView) and the cache needs
// (name, namespace, uid, resourceVersion, labels, ownerReferences, deletionTimestamp), the
// whole status, and of the spec only restartPolicy, nodeName and the container names. A
// generated Ray Pod is ~3 KB of JSON, most of it command, env and probes nobody reads back;
// large clusters (and other controllers' Pods in watched namespaces) then cost a fraction of
// it. Pure.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>

namespace rayjournal::controller {

std::shared_ptr<const nlohmann::json> podAsCached(
    const std::shared_ptr<const nlohmann::json>& pod);

}  // namespace rayjournal::controller
