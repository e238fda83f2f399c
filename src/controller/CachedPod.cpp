#include "controller/CachedPod.h"

#include "controller/JsonAccess.h"

namespace rayjournal::controller {

std::shared_ptr<const json> podAsCached(const std::shared_ptr<const json>& pod) {
  if (!pod || !pod->is_object()) return pod;
  json meta = objectAt(*pod, "metadata");
  meta.erase("managedFields");
  if (meta.contains("annotations") && meta["annotations"].is_object())
    meta["annotations"].erase("kubectl.kubernetes.io/last-applied-configuration");
  const json& spec = objectAt(*pod, "spec");
  json slimSpec = json::object();
  for (const char* kept : {"restartPolicy", "nodeName"})
    if (spec.contains(kept)) slimSpec[kept] = spec[kept];
  json containers = json::array();
  for (const auto& c : arrayAt(spec, "containers")) containers.push_back({{"name", memberAt(c, "name")}});
  slimSpec["containers"] = std::move(containers);
  json slim = {{"apiVersion", memberAt(*pod, "apiVersion")},
               {"kind", memberAt(*pod, "kind")},
               {"metadata", std::move(meta)},
               {"spec", std::move(slimSpec)}};
  if (pod->contains("status")) slim["status"] = (*pod)["status"];
  return std::make_shared<const json>(std::move(slim));
}

}  // namespace rayjournal::controller
