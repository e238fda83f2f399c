// Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics: a holder
// renews every retryPeriod; another candidate takes the Lease only after leaseDuration has
// passed without the renewTime changing (measured on its own clock, from when it observed the
// change); writes are guarded by resourceVersion, so two candidates cannot both win.
// The holder considers itself leader only until lastRenew + renewDeadline (< leaseDuration):
// isLeader() turns false, and onLost runs, before any other candidate can take over.
// Thread-safe. acquire() blocks; the renew loop runs in its own thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "adapters/kube/KubeClient.h"

namespace rayjournal::kube {

struct LeaderElectionOptions {
  std::string ns;  // empty: "default"
  std::string name = "rayjournal-operator";
  std::string identity;  // default: hostname_<16 random hex digits>, unique per process
  std::chrono::milliseconds leaseDuration{15000};
  std::chrono::milliseconds renewDeadline{10000};
  std::chrono::milliseconds retryPeriod{2000};
};

class LeaderElector {
 public:
  LeaderElector(KubeClient& kube, LeaderElectionOptions options);
  ~LeaderElector();
  // Blocks until this process holds the Lease (true) or stop() is called (false).
  bool acquire();
  // Renews in the background; onLost runs once, on the renew thread, if leadership is lost.
  void startRenewing(std::function<void()> onLost);
  bool isLeader() const;
  // Stops renewing and, if leading, gives the Lease up so another candidate need not wait.
  void stop();
  const std::string& identity() const { return options_.identity; }

 private:
  bool tryAcquireOrRenew();
  bool sleep(std::chrono::milliseconds d);

  KubeClient& kube_;
  LeaderElectionOptions options_;
  std::string observedRenewTime_, observedHolder_;
  std::chrono::steady_clock::time_point observedAt_{};
  std::atomic<int64_t> leaderUntilNs_{0};  // steady-clock deadline of our leadership
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread renewer_;
};

}  // namespace rayjournal::kube
