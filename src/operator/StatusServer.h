// The operator's own HTTP endpoint: /metrics (Prometheus text), /healthz (the process serves),
// /readyz (200 once ready() is true: recovery finished and the watches listed everything).
// Serves one connection at a time on its own thread (scrapes and probes are rare and small); a
// client that stalls is cut off after ioTimeout, so it cannot hold up the kubelet's probes.
// start() binds or throws naming the address; stop() closes and joins.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "operator/Metrics.h"

namespace rayjournal::operator_ {

class StatusServer {
 public:
  // address: "host:port" or ":port" (all interfaces); port 0 picks a free one.
  StatusServer(std::string address, Metrics& metrics, std::function<bool()> ready,
               std::chrono::milliseconds ioTimeout = std::chrono::seconds(5));
  ~StatusServer();
  void start();
  void stop();
  int port() const { return port_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string address_;
  Metrics& metrics_;
  std::function<bool()> ready_;
  std::chrono::milliseconds ioTimeout_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace rayjournal::operator_
