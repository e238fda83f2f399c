#include "operator/StatusServer.h"

#include <spdlog/spdlog.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace rayjournal::operator_ {
namespace {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

// One read or write with a deadline: a client that stalls is cut off after the timeout (a blocking
// read would wait for it for ever, and asio ignores SO_RCVTIMEO).
template <typename Start>
void runWithTimeout(asio::io_context& ioc, boost::beast::tcp_stream& stream,
                    std::chrono::milliseconds timeout, Start&& start) {
  boost::system::error_code result;
  stream.expires_after(timeout);
  start([&](boost::system::error_code ec, std::size_t) { result = ec; });
  ioc.restart();
  ioc.run();
  if (result) throw boost::system::system_error(result);
}

}  // namespace

struct StatusServer::Impl {
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::atomic<bool> stopping{false};
};

StatusServer::StatusServer(std::string address, Metrics& metrics, std::function<bool()> ready,
                           std::chrono::milliseconds ioTimeout)
    : impl_(std::make_unique<Impl>()),
      address_(std::move(address)),
      metrics_(metrics),
      ready_(std::move(ready)),
      ioTimeout_(ioTimeout) {}

StatusServer::~StatusServer() {
  stop();
}

void StatusServer::start() {
  auto colon = address_.rfind(':');
  std::string host = colon == std::string::npos ? "" : address_.substr(0, colon);
  std::string port = colon == std::string::npos ? address_ : address_.substr(colon + 1);
  try {
    tcp::endpoint ep(host.empty() ? asio::ip::address_v4::any() : asio::ip::make_address(host),
                     static_cast<unsigned short>(std::stoi(port)));
    impl_->acceptor.open(ep.protocol());
    impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
    impl_->acceptor.bind(ep);
    impl_->acceptor.listen();
    port_ = impl_->acceptor.local_endpoint().port();
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot serve metrics and probes on " + address_ + ": " + e.what());
  }
  thread_ = std::thread([this] {
    while (!impl_->stopping) {
      tcp::socket socket(impl_->ioc);
      boost::system::error_code ec;
      impl_->acceptor.accept(socket, ec);
      if (ec) continue;
      boost::beast::tcp_stream stream(std::move(socket));
      try {
        boost::beast::flat_buffer buffer;
        bhttp::request<bhttp::string_body> req;
        runWithTimeout(impl_->ioc, stream, ioTimeout_,
                       [&](auto done) { bhttp::async_read(stream, buffer, req, done); });
        bhttp::response<bhttp::string_body> res{bhttp::status::ok, req.version()};
        std::string target(req.target());
        res.set(bhttp::field::content_type, "text/plain; charset=utf-8");
        if (target == "/metrics") {
          res.set(bhttp::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
          res.body() = metrics_.render();
        } else if (target == "/healthz" || target == "/livez") {
          res.body() = "ok\n";
        } else if (target == "/readyz") {
          bool ready = ready_();
          res.result(ready ? bhttp::status::ok : bhttp::status::service_unavailable);
          res.body() = ready ? "ok\n" : "not ready: recovering or caches not synced\n";
        } else {
          res.result(bhttp::status::not_found);
          res.body() = "not found; try /metrics, /healthz or /readyz\n";
        }
        res.keep_alive(false);
        res.prepare_payload();
        runWithTimeout(impl_->ioc, stream, ioTimeout_,
                       [&](auto done) { bhttp::async_write(stream, res, done); });
      } catch (const std::exception& e) {
        spdlog::debug("status server: {}", e.what());
      }
      stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    }
  });
}

void StatusServer::stop() {
  if (impl_->stopping.exchange(true)) return;
  boost::system::error_code ec;
  // Wake the blocking accept by shutting the listening socket down; close it only once the
  // accepting thread is gone (closing it under a blocked accept is a data race, found by TSan).
  ::shutdown(impl_->acceptor.native_handle(), SHUT_RDWR);
  if (thread_.joinable()) thread_.join();
  impl_->acceptor.close(ec);
}

}  // namespace rayjournal::operator_
