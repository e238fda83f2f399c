// A small HTTP/1.1 client over Boost.Beast, with TLS (OpenSSL) and keep-alive connection reuse,
// for the Kubernetes API server and the Ray dashboard.
// Guarantees: the server certificate is verified against the configured CA and the host name
// or IP address (unless insecure); every operation is bounded by the timeout; a request that
// failed on a reused idle connection before any byte of the answer arrived is retried once on a
// fresh connection, and an idle connection the server has closed is never used. Thread-safe:
// each call takes its own connection from the pool.
// Blocking: request() until the answer or the timeout; stream() until the body ends, the
// callback returns false, or cancelStreams() is called.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace rayjournal::http {

// The server could not be reached, or the connection broke; the message names the server.
class HttpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TlsConfig {
  std::string caPem;    // empty: the system's default CA paths
  std::string certPem;  // client certificate (optional)
  std::string keyPem;
  bool insecureSkipVerify = false;
};

struct HttpResponse {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
};

using Headers = std::map<std::string, std::string>;

struct HttpRequest {
  std::string method, target, body;
  Headers headers;
};

// Bounds on what a server can make the client hold: a whole answer (a list of every object of
// a kind in a large cluster fits), and one line of a watch stream (one event: the API server
// caps an object at about 1.5 MB).
inline constexpr uint64_t kMaxResponseBodyBytes = uint64_t(512) << 20;
inline constexpr size_t kMaxStreamLineBytes = size_t(16) << 20;

class HttpClient {
 public:
  // baseUrl: http://host:port or https://host:port (a path suffix is ignored).
  HttpClient(const std::string& baseUrl, TlsConfig tls, std::chrono::milliseconds timeout);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  HttpResponse request(const std::string& method, const std::string& target,
                       const std::string& body = "", const Headers& headers = {});
  // HTTP/1.1 pipelining: every request written on one connection before any answer is read,
  // then the answers in order: one write and a few reads for many requests (fire-and-forget
  // creates such as Events). Returns an answer for each request, or for the first ones only
  // when the connection failed part-way; `error` then says why. The unanswered requests may or
  // may not have been served: they are not sent again. Blocking: until every answer or the
  // timeout for one.
  std::vector<HttpResponse> pipeline(const std::vector<HttpRequest>& requests,
                                     std::string* error = nullptr);
  // Streams a response body line by line (a Kubernetes watch). Returns the status; on a
  // non-2xx status the body is not streamed but returned in errorBody. idleTimeout bounds the
  // wait for each new piece of the body.
  int stream(const std::string& target, const Headers& headers,
             const std::function<bool(const std::string& line)>& onLine,
             std::chrono::milliseconds idleTimeout, std::string* errorBody = nullptr);
  // Ends every stream() in progress and any later one (they return as if the server closed).
  void cancelStreams();
  const std::string& baseUrl() const { return baseUrl_; }

 private:
  class Connection;
  // An idle connection the server has not closed, or a new one (always new when fresh).
  std::unique_ptr<Connection> take(bool fresh = false);
  std::unique_ptr<Connection> connect();
  void give(std::unique_ptr<Connection> connection);
  std::string requestHead(const std::string& method, const std::string& target,
                          const Headers& headers, const std::string* body) const;
  std::string wireText(const HttpRequest& request) const;
  void send(Connection& c, const std::string& text, const std::string& what);
  // One answer; nothingRead says whether the server had sent any of it when this throws.
  HttpResponse readAnswer(Connection& c, const std::string& method, const std::string& target,
                          bool& nothingRead);
  struct StreamParser;
  // A stream's body, line by line, until it ends, onLine says stop, or a bound is broken.
  void readLines(Connection& c, StreamParser& parser, const std::string& target,
                 const std::function<bool(const std::string&)>& onLine,
                 std::chrono::milliseconds idleTimeout);

  std::string baseUrl_, host_, port_;
  bool tls_;
  struct Transport;
  std::unique_ptr<Transport> transport_;
  std::mutex resolveMu_;
  std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_;
  std::set<Connection*> streaming_;
  bool streamsCancelled_ = false;
};

}  // namespace rayjournal::http
