#include "adapters/http/HttpClient.h"

#include "adapters/http/DeadlineSocket.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <optional>


namespace rayjournal::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

struct Url {
  bool tls = false;
  std::string host, port;
};

Url parseUrl(const std::string& url) {
  Url u;
  std::string rest;
  if (url.rfind("https://", 0) == 0) {
    u.tls = true;
    rest = url.substr(8);
  } else if (url.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else {
    rest = url;
  }
  rest = rest.substr(0, rest.find('/'));
  if (rest.empty()) throw HttpError("invalid server address '" + url + "'");
  auto colon = rest.rfind(':');
  if (rest.front() == '[') {  // [ipv6]:port
    auto close = rest.find(']');
    u.host = rest.substr(1, close - 1);
    u.port = close + 1 < rest.size() ? rest.substr(close + 2) : "";
  } else if (colon != std::string::npos) {
    u.host = rest.substr(0, colon);
    u.port = rest.substr(colon + 1);
  } else {
    u.host = rest;
  }
  if (u.port.empty()) u.port = u.tls ? "443" : "80";
  return u;
}

bool isIpAddress(const std::string& host) {
  beast::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

}  // namespace

// What every connection shares: the io_context its sockets belong to (never run: each
// connection waits in poll), the resolver, and the TLS configuration.
struct HttpClient::Transport {
  asio::io_context ioc;
  tcp::resolver resolver{ioc};
  asio::ssl::context ctx{asio::ssl::context::tls_client};
};

// One keep-alive connection: its socket, the TLS session over it (https), and the bytes read
// past the last answer.
class HttpClient::Connection {
 public:
  Connection(asio::io_context& ioc, asio::ssl::context* tls) {
    if (tls)
      secure.emplace(ioc, *tls);
    else
      plain.emplace(ioc);
  }
  std::optional<DeadlineSocket> plain;
  std::optional<asio::ssl::stream<DeadlineSocket>> secure;
  beast::flat_buffer buffer;
  bool reused = false;  // it has carried a request before

  DeadlineSocket& socket() { return secure ? secure->next_layer() : *plain; }
  template <class F>
  auto withStream(F&& f) {
    return secure ? f(*secure) : f(*plain);
  }
  bool closedWhileIdle() { return buffer.size() > 0 || socket().readableNow(); }
  void close() { socket().close(); }
};

HttpClient::HttpClient(const std::string& baseUrl, TlsConfig tls, std::chrono::milliseconds timeout)
    : baseUrl_(baseUrl), timeout_(timeout) {
  Url u = parseUrl(baseUrl);
  host_ = u.host;
  port_ = u.port;
  tls_ = u.tls;
  transport_ = std::make_unique<Transport>();
  if (!tls_) return;
  auto& ctx = transport_->ctx;
  try {
    if (tls.insecureSkipVerify) {
      ctx.set_verify_mode(asio::ssl::verify_none);
    } else {
      ctx.set_verify_mode(asio::ssl::verify_peer);
      if (tls.caPem.empty())
        ctx.set_default_verify_paths();
      else
        ctx.add_certificate_authority(asio::buffer(tls.caPem));
    }
    if (!tls.certPem.empty()) {
      ctx.use_certificate_chain(asio::buffer(tls.certPem));
      ctx.use_private_key(asio::buffer(tls.keyPem), asio::ssl::context::pem);
    }
  } catch (const std::exception& e) {
    throw HttpError("TLS configuration for " + baseUrl + " is unusable: " + e.what());
  }
}

HttpClient::~HttpClient() = default;

// An idle HTTP/1.1 connection has nothing to read: readable means the server closed it (an idle
// timeout, a restart, a load balancer) or sent a TLS close_notify. Checked without blocking.
std::unique_ptr<HttpClient::Connection> HttpClient::take(bool fresh) {
  while (!fresh) {
    std::unique_ptr<Connection> c;
    {
      std::lock_guard lock(mu_);
      if (idle_.empty()) break;
      c = std::move(idle_.back());
      idle_.pop_back();
    }
    if (!c->closedWhileIdle()) return c;
    c->close();
  }
  return connect();
}

std::unique_ptr<HttpClient::Connection> HttpClient::connect() {
  auto c = std::make_unique<Connection>(transport_->ioc, tls_ ? &transport_->ctx : nullptr);
  auto fail = [&](const std::string& what, const beast::error_code& ec) {
    throw HttpError("cannot reach " + baseUrl_ + ": " + what + ": " + ec.message());
  };
  beast::error_code ec;
  tcp::resolver::results_type endpoints;
  {
    std::lock_guard lock(resolveMu_);  // the resolver is not safe for concurrent use
    endpoints = transport_->resolver.resolve(host_, port_, ec);
  }
  if (ec) fail("resolving " + host_, ec);
  c->socket().expiresAfter(timeout_);
  c->socket().connect(endpoints, ec);
  if (ec) fail("connect", ec);
  if (c->secure) {
    SSL* ssl = c->secure->native_handle();
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    if (isIpAddress(host_)) {
      X509_VERIFY_PARAM_set1_ip_asc(param, host_.c_str());
    } else {
      SSL_set_tlsext_host_name(ssl, host_.c_str());
      X509_VERIFY_PARAM_set1_host(param, host_.c_str(), 0);
    }
    c->secure->handshake(asio::ssl::stream_base::client, ec);
    if (ec) fail("TLS handshake", ec);
  }
  return c;
}

void HttpClient::give(std::unique_ptr<Connection> connection) {
  std::lock_guard lock(mu_);
  if (idle_.size() < 16) idle_.push_back(std::move(connection));
}

// The request's head, and its body when it has one, as the bytes that go on the wire.
std::string HttpClient::requestHead(const std::string& method, const std::string& target,
                                    const Headers& headers, const std::string* body) const {
  // The message is built only for a refusal: this runs for every request.
  auto hasBreak = [](const std::string& text) {
    return text.find_first_of("\r\n") != std::string::npos;
  };
  auto refuse = [&](const std::string& what) {
    throw HttpError(method + " " + baseUrl_ + ": the " + what + " has a line break");
  };
  if (hasBreak(target)) refuse("target");
  std::string text;
  text.reserve(160 + target.size() + (body ? body->size() : 0));
  text.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: ").append(host_);
  text.append("\r\nUser-Agent: rayjournal\r\n");
  for (const auto& [name, value] : headers) {
    if (hasBreak(name) || hasBreak(value)) refuse("header " + name);
    text.append(name).append(": ").append(value).append("\r\n");
  }
  if (body) text.append("Content-Length: ").append(std::to_string(body->size())).append("\r\n");
  text.append("\r\n");
  if (body) text.append(*body);
  return text;
}

void HttpClient::send(Connection& c, const std::string& text, const std::string& what) {
  beast::error_code ec;
  // One write of heads and bodies: one TLS record where it fits, one segment on the wire.
  c.withStream([&](auto& s) { asio::write(s, asio::buffer(text), ec); });
  if (ec) throw HttpError("cannot reach " + baseUrl_ + ": sending " + what + ": " + ec.message());
}

std::string HttpClient::wireText(const HttpRequest& r) const {
  bool withBody = !r.body.empty() || r.method == "POST" || r.method == "PUT" || r.method == "PATCH";
  return requestHead(r.method, r.target, r.headers, withBody ? &r.body : nullptr);
}

HttpResponse HttpClient::readAnswer(Connection& c, const std::string& method,
                                    const std::string& target, bool& nothingRead) {
  nothingRead = true;
  beast::error_code ec;
  bhttp::response_parser<bhttp::string_body> parser;
  // A number, not boost::none: Beast 1.74 compares a Content-Length against an empty limit as
  // "exceeded" once the body is not already buffered with the header.
  parser.body_limit(kMaxResponseBodyBytes);
  c.withStream([&](auto& s) { bhttp::read_header(s, c.buffer, parser, ec); });
  // The declared length is refused before any of the body is read (or memory reserved for it).
  bool tooLarge = ec == bhttp::error::body_limit ||
                  (!ec && parser.content_length() && *parser.content_length() > kMaxResponseBodyBytes);
  if (!ec && !tooLarge && !parser.is_done())
    c.withStream([&](auto& s) { bhttp::read(s, c.buffer, parser, ec); });
  if (tooLarge || ec == bhttp::error::body_limit) {
    nothingRead = false;  // the server answered: not a stale keep-alive connection to retry
    c.close();
    throw HttpError("the answer of " + baseUrl_ + " to " + method + " " + target +
                    " is larger than the " + std::to_string(kMaxResponseBodyBytes >> 20) +
                    " MiB limit");
  }
  if (ec) {
    nothingRead = !parser.got_some();
    throw HttpError("no answer from " + baseUrl_ + " to " + method + " " + target + ": " +
                    ec.message());
  }
  nothingRead = false;
  auto& res = parser.get();
  HttpResponse out;
  out.status = int(res.result_int());
  out.body = std::move(res.body());
  for (const auto& field : res) {
    std::string name(field.name_string());
    for (auto& ch : name) ch = char(std::tolower(ch));
    out.headers[name] = std::string(field.value());
  }
  if (!res.keep_alive()) c.close();
  return out;
}

HttpResponse HttpClient::request(const std::string& method, const std::string& target,
                                 const std::string& body, const Headers& headers) {
  const std::string text = wireText({method, target, body, headers});
  for (int attempt = 0;; ++attempt) {
    // The retry connects afresh: the other idle connections may have been closed with this one.
    auto c = take(/*fresh=*/attempt > 0);
    bool reused = c->reused;
    c->reused = true;
    bool nothingRead = true;
    try {
      c->socket().expiresAfter(timeout_);  // the whole exchange
      send(*c, text, method);
      HttpResponse res = readAnswer(*c, method, target, nothingRead);
      if (c->socket().socket().is_open()) give(std::move(c));
      return res;
    } catch (const HttpError&) {
      c->close();
      // A keep-alive connection the server had already closed: retry once, fresh.
      if (!(reused && nothingRead && attempt == 0)) throw;
    }
  }
}

std::vector<HttpResponse> HttpClient::pipeline(const std::vector<HttpRequest>& requests,
                                               std::string* error) {
  std::vector<HttpResponse> answers;
  bool retried = false;
  while (answers.size() < requests.size()) {
    auto c = take(/*fresh=*/retried);
    bool reused = c->reused;
    c->reused = true;
    const size_t first = answers.size();
    bool nothingRead = true;
    try {
      std::string text;
      for (size_t i = first; i < requests.size(); ++i) text += wireText(requests[i]);
      c->socket().expiresAfter(timeout_);
      send(*c, text, std::to_string(requests.size() - first) + " pipelined requests");
      // A server that answers "Connection: close" serves no request after that one: the rest
      // go again on another connection.
      while (answers.size() < requests.size() && c->socket().socket().is_open()) {
        const HttpRequest& r = requests[answers.size()];
        c->socket().expiresAfter(timeout_);  // each answer
        answers.push_back(readAnswer(*c, r.method, r.target, nothingRead));
      }
      if (c->socket().socket().is_open()) give(std::move(c));
    } catch (const HttpError& e) {
      c->close();
      // A keep-alive connection the server had already closed: once more, fresh. Otherwise
      // whether the unanswered requests were served is unknown: they are not sent again.
      if (reused && nothingRead && answers.size() == first && !retried) {
        retried = true;
        continue;
      }
      if (error) *error = e.what();
      return answers;
    }
  }
  return answers;
}

struct HttpClient::StreamParser {
  bhttp::response_parser<bhttp::string_body> parser;
};

int HttpClient::stream(const std::string& target, const Headers& headers,
                       const std::function<bool(const std::string&)>& onLine,
                       std::chrono::milliseconds idleTimeout, std::string* errorBody) {
  auto c = take();
  {
    std::lock_guard lock(mu_);
    if (streamsCancelled_) return 0;
    streaming_.insert(c.get());
  }
  struct Unregister {
    HttpClient* self;
    Connection* c;
    ~Unregister() {
      std::lock_guard lock(self->mu_);
      self->streaming_.erase(c);
    }
  } unregister{this, c.get()};
  std::string text = requestHead("GET", target, headers, nullptr);
  c->socket().expiresAfter(timeout_);
  beast::error_code ec;
  c->withStream([&](auto& s) { asio::write(s, asio::buffer(text), ec); });
  if (ec) throw HttpError("cannot reach " + baseUrl_ + ": watch " + target + ": " + ec.message());
  StreamParser streamParser;
  auto& parser = streamParser.parser;
  parser.body_limit(kMaxResponseBodyBytes);  // an error answer, or a stream with a length
  c->withStream([&](auto& s) { bhttp::read_header(s, c->buffer, parser, ec); });
  if (ec)
    throw HttpError("no answer from " + baseUrl_ + " to watch " + target + ": " + ec.message());
  int status = int(parser.get().result_int());
  if (status < 200 || status >= 300) {
    c->socket().expiresAfter(timeout_);
    c->withStream([&](auto& s) { bhttp::read(s, c->buffer, parser, ec); });
    if (errorBody) *errorBody = ec ? "(no readable body: " + ec.message() + ")" : parser.get().body();
    return status;
  }
  // A chunked stream has no total size; each line is bounded instead.
  if (parser.chunked()) parser.body_limit(boost::none);
  readLines(*c, streamParser, target, onLine, idleTimeout);
  return status;
}

void HttpClient::readLines(Connection& c, StreamParser& streamParser, const std::string& target,
                           const std::function<bool(const std::string&)>& onLine,
                           std::chrono::milliseconds idleTimeout) {
  auto& parser = streamParser.parser;
  size_t consumed = 0, scanned = 0;  // scanning resumes where it stopped: linear in the bytes
  while (!parser.is_done()) {
    c.socket().expiresAfter(idleTimeout);
    beast::error_code ec;
    c.withStream([&](auto& s) { bhttp::read_some(s, c.buffer, parser, ec); });
    std::string& text = parser.get().body();
    for (size_t nl; (nl = text.find('\n', std::max(consumed, scanned))) != std::string::npos;
         consumed = nl + 1) {
      if (nl > consumed && !onLine(text.substr(consumed, nl - consumed))) return;
    }
    scanned = text.size();
    if (scanned - consumed > kMaxStreamLineBytes) {
      c.socket().shutdownBoth();  // closed once unregistered: cancelStreams() may hold it now
      throw HttpError("watch " + target + " from " + baseUrl_ + ": a line longer than " +
                      std::to_string(kMaxStreamLineBytes >> 20) +
                      " MiB without a newline; dropping the stream");
    }
    if (consumed > 0) {
      text.erase(0, consumed);
      scanned -= consumed;
      consumed = 0;
    }
    if (ec == bhttp::error::body_limit) {
      c.socket().shutdownBoth();  // closed once unregistered: cancelStreams() may hold it now
      throw HttpError("watch " + target + " from " + baseUrl_ + ": the answer is larger than " +
                      std::to_string(kMaxResponseBodyBytes >> 20) + " MiB");
    }
    if (ec) break;  // closed, timed out, or cancelled: the caller resumes from its position
  }
}

void HttpClient::cancelStreams() {
  std::lock_guard lock(mu_);
  streamsCancelled_ = true;
  for (Connection* c : streaming_) {
    c->socket().shutdownBoth();  // the descriptor stays open until stream() unregisters it
  }
}

}  // namespace rayjournal::http
