#include "adapters/kube/LeaderElector.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <random>

#include "adapters/TimeFormat.h"

namespace rayjournal::kube {
namespace {

int64_t steadyNs(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

int64_t wallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

LeaderElector::LeaderElector(KubeClient& kube, LeaderElectionOptions options)
    : kube_(kube), options_(std::move(options)) {
  if (options_.ns.empty()) options_.ns = "default";
  if (options_.identity.empty()) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    // Unique per process, not hostname_pid: in a container the pid is 1 every time, and the
    // replacement of a force-deleted Pod (same name, same hostname) runs beside the old one.
    // Sharing an identity, each would take the other's Lease for its own.
    std::random_device random;
    char suffix[17];
    std::snprintf(suffix, sizeof(suffix), "%08x%08x", random(), random());
    options_.identity = std::string(host) + "_" + suffix;
  }
}

LeaderElector::~LeaderElector() {
  stop();
}

bool LeaderElector::isLeader() const {
  return steadyNs(std::chrono::steady_clock::now()) < leaderUntilNs_.load();
}

bool LeaderElector::sleep(std::chrono::milliseconds d) {
  std::unique_lock lock(mu_);
  return !cv_.wait_for(lock, d, [this] { return stopping_.load(); });
}

bool LeaderElector::tryAcquireOrRenew() {
  auto now = std::chrono::steady_clock::now();
  std::string nowText = toRfc3339Micro(wallMs());
  // Rounded up: the Lease must promise others at least the time this holder believes it leads
  // (renewDeadline < leaseDuration). Rounding down let a 1.5 s lease be taken after 1 s while its
  // holder still acted until 1.2 s (LeaderElectorTest found it with a sub-second lease: 0 s).
  int durationSeconds = int((options_.leaseDuration.count() + 999) / 1000);
  auto existing = kube_.get("Lease", options_.ns, options_.name);
  if (!existing) {
    json lease{{"apiVersion", "coordination.k8s.io/v1"},
               {"kind", "Lease"},
               {"metadata", {{"name", options_.name}, {"namespace", options_.ns}}},
               {"spec",
                {{"holderIdentity", options_.identity},
                 {"leaseDurationSeconds", durationSeconds},
                 {"acquireTime", nowText},
                 {"renewTime", nowText},
                 {"leaseTransitions", 0}}}};
    try {
      kube_.create("Lease", lease);
    } catch (const ApiError& e) {
      if (e.alreadyExists()) return false;
      throw;
    }
    leaderUntilNs_ = steadyNs(now + options_.renewDeadline);
    return true;
  }
  json spec = existing->value("spec", json::object());
  std::string holder = spec.value("holderIdentity", "");
  std::string renewTime = spec.value("renewTime", "");
  if (holder != observedHolder_ || renewTime != observedRenewTime_) {
    observedHolder_ = holder;
    observedRenewTime_ = renewTime;
    observedAt_ = now;
  }
  int holderSeconds = spec.value("leaseDurationSeconds", durationSeconds);
  bool heldByOther = !holder.empty() && holder != options_.identity &&
                     now < observedAt_ + std::chrono::seconds(holderSeconds);
  if (heldByOther) {
    leaderUntilNs_ = 0;  // someone else holds it: we are certainly not the leader
    return false;
  }
  json next = *existing;
  if (holder != options_.identity) {
    next["spec"]["acquireTime"] = nowText;
    next["spec"]["leaseTransitions"] = spec.value("leaseTransitions", 0) + 1;
  }
  next["spec"]["holderIdentity"] = options_.identity;
  next["spec"]["leaseDurationSeconds"] = durationSeconds;
  next["spec"]["renewTime"] = nowText;
  try {
    kube_.update("Lease", next);  // resourceVersion precondition: one winner
  } catch (const ApiError& e) {
    if (e.conflict()) return false;
    throw;
  }
  leaderUntilNs_ = steadyNs(now + options_.renewDeadline);
  return true;
}

bool LeaderElector::acquire() {
  spdlog::info("leader election: waiting for Lease {}/{} as {}", options_.ns, options_.name,
               options_.identity);
  while (!stopping_) {
    try {
      if (tryAcquireOrRenew()) {
        spdlog::info("leader election: {} now holds Lease {}/{}", options_.identity, options_.ns,
                     options_.name);
        return true;
      }
    } catch (const std::exception& e) {
      spdlog::warn("leader election: {}", e.what());
    }
    if (!sleep(options_.retryPeriod)) break;
  }
  return false;
}

void LeaderElector::startRenewing(std::function<void()> onLost) {
  std::lock_guard lock(mu_);
  if (stopping_) return;  // stop() won the race: it must not have a thread to miss
  renewer_ = std::thread([this, onLost] {
    while (sleep(options_.retryPeriod)) {
      try {
        if (tryAcquireOrRenew()) continue;
      } catch (const std::exception& e) {
        spdlog::warn("leader election: renewing Lease {}/{} failed: {}", options_.ns, options_.name,
                     e.what());
      }
      if (!isLeader()) {
        spdlog::error("leader election: lost Lease {}/{} (not renewed within {} ms)", options_.ns,
                      options_.name, options_.renewDeadline.count());
        onLost();
        return;
      }
    }
  });
}

void LeaderElector::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_.exchange(true)) return;
  }
  cv_.notify_all();
  if (renewer_.joinable()) renewer_.join();
  if (!isLeader()) return;
  leaderUntilNs_ = 0;
  try {
    auto lease = kube_.get("Lease", options_.ns, options_.name);
    if (lease && (*lease)["spec"].value("holderIdentity", "") == options_.identity) {
      (*lease)["spec"]["holderIdentity"] = "";
      (*lease)["spec"]["leaseDurationSeconds"] = 1;
      kube_.update("Lease", *lease);
      spdlog::info("leader election: released Lease {}/{}", options_.ns, options_.name);
    }
  } catch (const std::exception& e) {
    spdlog::warn("leader election: could not release the Lease: {}", e.what());
  }
}

}  // namespace rayjournal::kube
