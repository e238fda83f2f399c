// The operator's own HTTP endpoint: /metrics (Prometheus text), /healthz and /livez (the
// process serves), /readyz (200 once ready() is true: recovery finished and the watches listed
// everything).
//
// Built so that no client can starve the kubelet's probes: one thread serves every connection
// concurrently (asynchronous I/O); each connection must deliver its request and take its
// answer within ioTimeout; at most maxConnections are open, and a new one evicts the oldest
// (an idle or slow-loris client loses its place to a probe, never the other way round). GET
// and HEAD only (405 otherwise); a header over 8 KiB gets 431, a body 413, garbage 400; every
// answer closes its connection.
//
// start() binds or throws naming the address; stop() closes every connection and joins the
// thread in well under a second. ready() and Metrics::render() run on the server's thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "operator/Metrics.h"

namespace rayjournal::operator_ {

// What a handler answers to one GET (or HEAD) of a path with its query.
struct HttpAnswer {
  int status = 200;
  std::string contentType = "text/plain; charset=utf-8";
  std::string body;
};
using HttpHandler = std::function<HttpAnswer(const std::string& target)>;

class StatusServer {
 public:
  // The same server for other read-only pages (the history UI): every GET and HEAD goes to
  // handler, on the server's one thread. purpose names the server in a bind error.
  StatusServer(std::string address, std::string purpose, HttpHandler handler,
               std::chrono::milliseconds ioTimeout = std::chrono::seconds(5),
               std::size_t maxConnections = 256);
  // address: "host:port" or ":port" (all interfaces); port 0 picks a free one.
  StatusServer(std::string address, Metrics& metrics, std::function<bool()> ready,
               std::chrono::milliseconds ioTimeout = std::chrono::seconds(5),
               std::size_t maxConnections = 256);
  ~StatusServer();
  // Before start(): the reason /readyz names while not ready, when why() returns one ("" keeps
  // the general answer). Runs on the server's thread.
  void explainNotReady(std::function<std::string()> why);
  void start();
  void stop();
  int port() const { return port_; }

  struct Impl;

 private:
  std::shared_ptr<std::function<std::string()>> why_ =
      std::make_shared<std::function<std::string()>>();
  std::unique_ptr<Impl> impl_;
  std::string address_;
  std::string purpose_ = "metrics and probes";
  int port_ = 0;
  std::thread thread_;
};

}  // namespace rayjournal::operator_
