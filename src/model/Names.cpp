#include "model/Names.h"

#include <charconv>

namespace rayjournal::model {

std::string headPodName(std::string_view cluster) {
  return std::string(cluster) + "-head";
}

std::string headServiceName(std::string_view cluster, std::string_view userOverride) {
  if (!userOverride.empty()) return std::string(userOverride);
  return std::string(cluster) + "-head-svc";
}

std::string workerPodPrefix(std::string_view cluster, std::string_view group) {
  return std::string(cluster) + "-" + std::string(group) + "-worker-";
}

std::string workerPodName(std::string_view cluster, std::string_view group, uint64_t index) {
  return workerPodPrefix(cluster, group) + std::to_string(index);
}

std::optional<uint64_t> workerPodIndex(std::string_view podName, std::string_view cluster,
                                       std::string_view group) {
  return workerIndexAfterPrefix(podName, workerPodPrefix(cluster, group));
}

std::optional<uint64_t> workerIndexAfterPrefix(std::string_view podName, std::string_view prefix) {
  if (podName.size() <= prefix.size() || podName.substr(0, prefix.size()) != prefix)
    return std::nullopt;
  std::string_view digits = podName.substr(prefix.size());
  if (digits.size() > 1 && digits[0] == '0') return std::nullopt;  // not a name we would give
  uint64_t index = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return index;
}

std::optional<WorkerName> workerNameParts(std::string_view podName, std::string_view cluster) {
  constexpr std::string_view kWorker = "-worker-";
  if (podName.size() <= cluster.size() + 1 || podName.substr(0, cluster.size()) != cluster ||
      podName[cluster.size()] != '-')
    return std::nullopt;
  const size_t at = podName.rfind(kWorker);
  if (at == std::string_view::npos || at <= cluster.size() + 1) return std::nullopt;  // no group
  std::string_view group = podName.substr(cluster.size() + 1, at - cluster.size() - 1);
  auto index = workerIndexAfterPrefix(podName, podName.substr(0, at + kWorker.size()));
  if (!index) return std::nullopt;
  return WorkerName{std::string(group), *index};
}

std::string rayJobHeadServiceName(std::string_view rayJob) {
  return std::string(rayJob) + "-head-svc";
}

std::string submitterJobName(std::string_view rayJob) {
  return std::string(rayJob);
}

std::string serviceAddress(std::string_view service, std::string_view ns,
                           std::string_view clusterDomain, int port) {
  return std::string(service) + "." + std::string(ns) + ".svc." + std::string(clusterDomain) +
         ":" + std::to_string(port);
}

}  // namespace rayjournal::model
