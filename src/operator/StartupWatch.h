// Start-up (connecting to the API server, winning the lease, opening and recovering the journal,
// filling the informer caches) blocks in calls that cannot be interrupted, and a pod's SIGTERM
// must not wait there for the kubelet's SIGKILL. This watch, on its own thread, ends the process
// at once when a stop signal arrives before running(), saying which phase it was in; until then
// it logs every `every` what start-up is still waiting for. Ending mid-start-up is what a crash
// is, which the journal is built for: every side effect already has its durable intent, and the
// next start resolves it.
// Thread-safe; the destructor (or running()) stops the thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace rayjournal::operator_ {

class StartupWatch {
 public:
  // signalReceived: the stop signal received so far, 0 for none (polled every 50 ms).
  // exitNow: ends the process with the given code (std::_Exit; a test replaces it).
  explicit StartupWatch(std::function<int()> signalReceived,
                        std::chrono::milliseconds every = std::chrono::seconds(5),
                        std::function<void(int)> exitNow = nullptr);
  ~StartupWatch();
  StartupWatch(const StartupWatch&) = delete;
  StartupWatch& operator=(const StartupWatch&) = delete;

  // What start-up waits for now, e.g. "waiting for the API server https://10.0.0.1:6443".
  // A phase that stops by itself on a signal (the leader election) is only logged, not ended.
  void phase(std::string what, bool stopsOnSignal = false);
  // Start-up is over: from here a signal is the caller's to handle (an orderly stop).
  void running();

 private:
  void watch();

  std::function<int()> signalReceived_;
  std::chrono::milliseconds every_;
  std::function<void(int)> exitNow_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string phase_ = "starting";
  std::chrono::steady_clock::time_point phaseSince_ = std::chrono::steady_clock::now();
  bool stopsOnSignal_ = false;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace rayjournal::operator_
