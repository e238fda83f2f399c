#include "operator/StatusServer.h"

#include <spdlog/spdlog.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <list>
#include <optional>

namespace rayjournal::operator_ {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using Response = bhttp::response<bhttp::string_body>;

constexpr std::uint32_t kHeaderLimit = 8 * 1024;
constexpr std::uint64_t kBodyLimit = 1024;  // probes and scrapes send none
constexpr auto kAcceptRetry = std::chrono::milliseconds(50);

Response plain(bhttp::status status, unsigned version, std::string body) {
  Response res{status, version};
  res.set(bhttp::field::content_type, "text/plain; charset=utf-8");
  res.body() = std::move(body);
  return res;
}

// A protocol error from the parser (bad request line, header too large, ...), as opposed to the
// connection ending or timing out.
std::optional<Response> rejection(const boost::system::error_code& ec) {
  if (ec == bhttp::error::header_limit)
    return plain(bhttp::status::request_header_fields_too_large, 11, "request header too large\n");
  if (ec == bhttp::error::body_limit)
    return plain(bhttp::status::payload_too_large, 11, "request body too large\n");
  if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message) return std::nullopt;
  if (ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category())
    return plain(bhttp::status::bad_request, 11, "malformed request\n");
  return std::nullopt;
}

}  // namespace

class Session;

namespace {

// The operator's status endpoints as a handler.
// why: the reason /readyz gives when it names one ("" for the general one).
HttpHandler statusHandler(Metrics& metrics, std::function<bool()> ready,
                          std::shared_ptr<std::function<std::string()>> why) {
  return [&metrics, ready = std::move(ready), why](const std::string& target) -> HttpAnswer {
    if (target == "/metrics")
      return {200, "text/plain; version=0.0.4; charset=utf-8", metrics.render()};
    if (target == "/healthz" || target == "/livez") return {200, "text/plain; charset=utf-8", "ok\n"};
    if (target == "/readyz") {
      if (ready()) return {200, "text/plain; charset=utf-8", "ok\n"};
      if (std::string reason = *why ? (*why)() : ""; !reason.empty())
        return {503, "text/plain; charset=utf-8", "not ready: " + reason + "\n"};
      return {503, "text/plain; charset=utf-8",
              "not ready: recovering, caches not synced, or the journal cannot be written\n"};
    }
    return {404, "text/plain; charset=utf-8", "not found; try /metrics, /healthz or /readyz\n"};
  };
}

}  // namespace

struct StatusServer::Impl {
  Impl(HttpHandler h, std::chrono::milliseconds t, std::size_t max)
      : handler(std::move(h)), ioTimeout(t), maxConnections(max) {}
  Response answer(const bhttp::request<bhttp::string_body>& req);
  void accept();
  void admit(tcp::socket socket);
  void shutDown();

  HttpHandler handler;
  std::chrono::milliseconds ioTimeout;
  std::size_t maxConnections;
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  asio::steady_timer acceptRetry{ioc};
  std::list<std::shared_ptr<Session>> sessions;  // oldest first
};

// One connection: read one request within the deadline, answer, close.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, StatusServer::Impl& server)
      : stream_(std::move(socket)), server_(server) {}

  void start(std::list<std::shared_ptr<Session>>::iterator place) {
    place_ = place;
    parser_.header_limit(kHeaderLimit);
    parser_.body_limit(kBodyLimit);
    stream_.expires_after(server_.ioTimeout);  // for the whole request, not per read
    bhttp::async_read(stream_, buffer_, parser_,
                      [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                        self->onRequest(ec);
                      });
  }

  // Drops the connection now (eviction, shutdown); its pending operation ends aborted.
  void close() {
    if (!listed_) return;
    listed_ = false;
    auto keep = shared_from_this();  // the list may hold the last reference
    server_.sessions.erase(place_);
    boost::system::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

 private:
  void onRequest(const boost::system::error_code& ec) {
    if (!listed_) return;
    if (ec) {
      spdlog::debug("status server: request not read: {}", ec.message());
      if (auto reply = rejection(ec)) return respond(std::move(*reply), false);
      return close();
    }
    const auto& req = parser_.get();
    respond(server_.answer(req), req.method() == bhttp::verb::head);
  }

  void respond(Response res, bool headOnly) {
    res_ = std::move(res);
    res_.keep_alive(false);
    res_.prepare_payload();
    if (headOnly) res_.body().clear();  // Content-Length still says what GET would send
    serializer_.emplace(res_);
    stream_.expires_after(server_.ioTimeout);
    auto done = [self = shared_from_this()](boost::system::error_code, std::size_t) {
      self->close();
    };
    if (headOnly)
      bhttp::async_write_header(stream_, *serializer_, done);
    else
      bhttp::async_write(stream_, *serializer_, done);
  }

  beast::tcp_stream stream_;
  StatusServer::Impl& server_;
  beast::flat_buffer buffer_;
  bhttp::request_parser<bhttp::string_body> parser_;
  Response res_;
  std::optional<bhttp::response_serializer<bhttp::string_body>> serializer_;
  std::list<std::shared_ptr<Session>>::iterator place_;
  bool listed_ = true;
};

Response StatusServer::Impl::answer(const bhttp::request<bhttp::string_body>& req) {
  const unsigned v = req.version();
  if (req.method() != bhttp::verb::get && req.method() != bhttp::verb::head) {
    Response res = plain(bhttp::status::method_not_allowed, v, "only GET and HEAD are served\n");
    res.set(bhttp::field::allow, "GET, HEAD");
    return res;
  }
  HttpAnswer answer;
  try {
    answer = handler(std::string(req.target()));
  } catch (const std::exception& e) {
    spdlog::warn("http server: GET {} failed: {}", std::string(req.target()), e.what());
    answer = {500, "text/plain; charset=utf-8", std::string("internal error: ") + e.what() + "\n"};
  }
  Response res = plain(static_cast<bhttp::status>(answer.status), v, std::move(answer.body));
  res.set(bhttp::field::content_type, answer.contentType);
  res.set(bhttp::field::cache_control, "no-store");
  return res;
}

void StatusServer::Impl::accept() {
  acceptor.async_accept(ioc, [this](boost::system::error_code ec, tcp::socket socket) {
    if (!acceptor.is_open()) return;
    if (!ec) {
      admit(std::move(socket));
      return accept();
    }
    // Out of file descriptors or similar: try again shortly instead of spinning.
    spdlog::debug("status server: accept failed: {}", ec.message());
    acceptRetry.expires_after(kAcceptRetry);
    acceptRetry.async_wait([this](boost::system::error_code waitEc) {
      if (!waitEc && acceptor.is_open()) accept();
    });
  });
}

void StatusServer::Impl::admit(tcp::socket socket) {
  if (sessions.size() >= maxConnections) sessions.front()->close();
  auto session = std::make_shared<Session>(std::move(socket), *this);
  sessions.push_back(session);
  session->start(std::prev(sessions.end()));
}

void StatusServer::Impl::shutDown() {
  boost::system::error_code ignored;
  acceptor.close(ignored);
  acceptRetry.cancel();
  while (!sessions.empty()) sessions.front()->close();
}

StatusServer::StatusServer(std::string address, Metrics& metrics, std::function<bool()> ready,
                           std::chrono::milliseconds ioTimeout, std::size_t maxConnections)
    : impl_(std::make_unique<Impl>(statusHandler(metrics, std::move(ready), why_), ioTimeout,
                                   std::max<std::size_t>(1, maxConnections))),
      address_(std::move(address)) {}

void StatusServer::explainNotReady(std::function<std::string()> why) {
  *why_ = std::move(why);
}

StatusServer::StatusServer(std::string address, std::string purpose, HttpHandler handler,
                           std::chrono::milliseconds ioTimeout, std::size_t maxConnections)
    : impl_(std::make_unique<Impl>(std::move(handler), ioTimeout,
                                   std::max<std::size_t>(1, maxConnections))),
      address_(std::move(address)),
      purpose_(std::move(purpose)) {}

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
    impl_->acceptor.listen(asio::socket_base::max_listen_connections);
    port_ = impl_->acceptor.local_endpoint().port();
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot serve " + purpose_ + " on " + address_ + ": " + e.what());
  }
  impl_->accept();
  thread_ = std::thread([this] { impl_->ioc.run(); });
}

// Closes the listener and every connection on the server's thread; their handlers finish at
// once (aborted), so run() returns and the thread ends.
void StatusServer::stop() {
  if (!thread_.joinable()) return;
  asio::post(impl_->ioc, [impl = impl_.get()] { impl->shutDown(); });
  thread_.join();
}

}  // namespace rayjournal::operator_
