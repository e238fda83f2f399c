// What the operator keeps of a Pod in its informer cache: the fields the RayCluster and RayJob
// decisions read (RayClusterViews.cpp podView, Views.cpp headPodView) and the cache needs
// (name, namespace, uid, resourceVersion, deletionTimestamp, the ray.io/cluster, node-type and
// group labels, the owner references' kind, name, uid and controller); of the spec the
// restartPolicy and the container names; of the status the phase, Pod IP, the Ready condition
// and how each container ended (and, once restarted, its restart count and last ending). A generated Ray Pod is ~3 KB of JSON, most of
// it command, env, probes and timestamps nobody reads back; the cache packs what is left
// (InformerCache KindOptions::packed) so that a RayCluster of 100,000 Pods fits in tens of MB.
// Pure.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>

namespace rayjournal::controller {

std::shared_ptr<const nlohmann::json> podAsCached(
    const std::shared_ptr<const nlohmann::json>& pod);

}  // namespace rayjournal::controller
