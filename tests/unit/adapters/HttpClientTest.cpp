// The HTTP/TLS client against servers that misbehave: a TLS configuration it cannot use, an
// answer delivered one byte at a time (as a slow network or TLS records split it), an answer
// too large, a watch line that never ends.
#include "adapters/http/HttpClient.h"

#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <thread>

namespace rayjournal::http {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

TEST(HttpClientTest, RejectsAnUnusableTlsConfiguration) {
  TlsConfig tls;
  tls.caPem = "not a certificate";
  EXPECT_THROW(HttpClient("https://127.0.0.1:1", tls, std::chrono::seconds(1)),
               HttpError);
}

// A listening socket on 127.0.0.1 for a test server's thread, which accepts until stopAccepting().
class LoopbackServer {
 public:
  std::string url() const { return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()); }

 protected:
  LoopbackServer() : acceptor_(ioc_, {asio::ip::make_address("127.0.0.1"), 0}) {}
  // The next connection, or none once stopAccepting() was called.
  std::optional<tcp::socket> accept() {
    tcp::socket s = acceptor_.accept();
    if (stop_) return std::nullopt;
    return s;
  }
  // Ends the accept loop: a connection of its own wakes the accept() waiting for one.
  void stopAccepting() {
    stop_ = true;
    boost::system::error_code ec;
    tcp::socket poke(ioc_);
    poke.connect(acceptor_.local_endpoint(), ec);
  }

  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  std::atomic<bool> stop_{false};
};

// Serves one connection: reads the request head, then writes `answer` in pieces of `piece`
// bytes, each its own TCP segment, a millisecond apart, then closes.
class TrickleServer : public LoopbackServer {
 public:
  TrickleServer(std::string answer, size_t piece) {
    thread_ = std::thread([this, answer = std::move(answer), piece] { serve(answer, piece); });
  }
  ~TrickleServer() { thread_.join(); }

 private:
  void serve(const std::string& answer, size_t piece) {
    tcp::socket s(ioc_);
    acceptor_.accept(s);
    s.set_option(tcp::no_delay(true));
    asio::streambuf request;
    boost::system::error_code ec;
    asio::read_until(s, request, "\r\n\r\n", ec);
    for (size_t at = 0; at < answer.size() && !ec; at += piece) {
      asio::write(s, asio::buffer(answer.data() + at, std::min(piece, answer.size() - at)), ec);
      if (piece < 64) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    // Until the client is done with the answer (it closes): an answer cut short is another test.
    char rest[256];
    while (!ec) s.read_some(asio::buffer(rest), ec);
    s.close(ec);
  }

  std::thread thread_;
};

TEST(HttpClientTest, AnAnswerArrivingByteByByteIsReadWhole) {
  std::string body = R"({"kind":"PodList","items":[]})";
  TrickleServer server("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body,
                       1);
  HttpClient client(server.url(), {}, std::chrono::seconds(10));
  HttpResponse res = client.request("GET", "/api/v1/pods");
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.body, body);
}

TEST(HttpClientTest, AWatchRefusedByteByByteReportsItsStatusAndBody) {
  std::string body = R"({"kind":"Status","code":500,"message":"etcd is down"})";
  TrickleServer server("HTTP/1.1 500 Internal Server Error\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\n\r\n" + body,
                       1);
  HttpClient client(server.url(), {}, std::chrono::seconds(10));
  std::string errorBody;
  int status = client.stream("/api/v1/pods?watch=1", {}, [](const std::string&) { return true; },
                             std::chrono::seconds(10), &errorBody);
  EXPECT_EQ(status, 500);
  EXPECT_EQ(errorBody, body);
}

std::string chunk(const std::string& data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + data + "\r\n";
}

TEST(HttpClientTest, AChunkedWatchArrivingByteByByteYieldsEveryLine) {
  std::string events = chunk("{\"type\":\"ADDED\"}\n{\"type\":") + chunk("\"MODIFIED\"}\n") + "0\r\n\r\n";
  TrickleServer server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + events, 1);
  HttpClient client(server.url(), {}, std::chrono::seconds(10));
  std::vector<std::string> lines;
  int status = client.stream("/w", {}, [&](const std::string& l) { lines.push_back(l); return true; },
                             std::chrono::seconds(10));
  EXPECT_EQ(status, 200);
  EXPECT_EQ(lines, (std::vector<std::string>{R"({"type":"ADDED"})", R"({"type":"MODIFIED"})"}));
}

TEST(HttpClientTest, AWatchLineWithoutEndIsDroppedAtItsLimit) {
  std::string endless(kMaxStreamLineBytes + (1 << 20), 'x');
  TrickleServer server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk(endless), 1 << 16);
  HttpClient client(server.url(), {}, std::chrono::seconds(10));
  try {
    client.stream("/w", {}, [](const std::string&) { return true; }, std::chrono::seconds(10));
    FAIL() << "an endless line was accepted";
  } catch (const HttpError& e) {
    EXPECT_NE(std::string(e.what()).find("16 MiB without a newline"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(server.url()), std::string::npos) << "names the server";
  }
}

TEST(HttpClientTest, AnAnswerLargerThanTheLimitIsRefusedByItsHeader) {
  TrickleServer server("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(kMaxResponseBodyBytes + 1) +
                           "\r\n\r\n{",
                       1 << 16);
  HttpClient client(server.url(), {}, std::chrono::seconds(10));
  try {
    client.request("GET", "/api/v1/pods");
    FAIL() << "a 512 MiB answer was accepted";
  } catch (const HttpError& e) {
    EXPECT_NE(std::string(e.what()).find("larger than the 512 MiB limit"), std::string::npos) << e.what();
  }
}

// Answers the first `pooled` connections together (each request held until all have arrived, so
// the client keeps that many idle connections), then closes them all, as an API server's or a load
// balancer's idle timeout does; `closed` is set then. Later connections are answered one request
// each and counted.
class IdleClosingServer : public LoopbackServer {
 public:
  explicit IdleClosingServer(int pooled) {
    thread_ = std::thread([this, pooled] { serve(pooled); });
  }
  ~IdleClosingServer() {
    stopAccepting();
    thread_.join();
  }
  std::promise<void> closed;
  std::atomic<int> laterConnections{0};

 private:
  static constexpr char kAnswer[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
  void serve(int pooled) {
    std::vector<tcp::socket> first;
    boost::system::error_code ec;
    for (int i = 0; i < pooled; ++i) {
      first.push_back(acceptor_.accept());
      asio::streambuf request;
      asio::read_until(first.back(), request, "\r\n\r\n", ec);
    }
    for (auto& s : first) asio::write(s, asio::buffer(kAnswer, sizeof kAnswer - 1), ec);
    for (auto& s : first) s.close(ec);
    closed.set_value();
    while (true) {
      std::optional<tcp::socket> next = accept();
      if (!next) return;
      tcp::socket s = std::move(*next);
      ++laterConnections;
      asio::streambuf request;
      asio::read_until(s, request, "\r\n\r\n", ec);
      asio::write(s, asio::buffer(kAnswer, sizeof kAnswer - 1), ec);
      char rest[256];
      while (!ec) s.read_some(asio::buffer(rest), ec);
    }
  }

  std::thread thread_;
};

// The API server closed every pooled connection while the operator was idle: the next request
// used to take one closed connection, retry on another closed one and fail ("end of stream"),
// and a RayJob's finalizer write failed after two quiet minutes (kuberay_e2e.subset in CI).
TEST(HttpClientTest, IdleConnectionsTheServerClosedAreNotUsed) {
  IdleClosingServer server(3);
  HttpClient client(server.url(), {}, std::chrono::seconds(10));
  std::vector<std::thread> first;
  for (int i = 0; i < 3; ++i)
    first.emplace_back([&] { EXPECT_EQ(client.request("GET", "/api/v1/pods").status, 200); });
  for (auto& t : first) t.join();
  server.closed.get_future().wait();
  EXPECT_EQ(client.request("PUT", "/apis/ray.io/v1/rayjobs/x", "{}").status, 200);
  EXPECT_EQ(server.laterConnections, 1);
}

// Accepts connections and reads what comes, but never answers: a hung API server or dashboard.
// Records the first request's bytes as they arrived.
class SilentServer : public LoopbackServer {
 public:
  SilentServer() {
    thread_ = std::thread([this] { serve(); });
  }
  ~SilentServer() {
    stopAccepting();
    thread_.join();
  }
  std::promise<std::string> firstRequest;

 private:
  void serve() {
    std::vector<tcp::socket> held;  // open and unanswered until the server ends
    bool first = true;
    while (true) {
      std::optional<tcp::socket> next = accept();
      if (!next) return;
      tcp::socket s = std::move(*next);
      boost::system::error_code ec;
      asio::streambuf request;
      size_t head = asio::read_until(s, request, "\r\n\r\n", ec);
      if (first && !ec) {
        std::string text(asio::buffers_begin(request.data()), asio::buffers_end(request.data()));
        auto at = text.find("Content-Length: ");
        size_t length = at == std::string::npos ? 0 : std::stoul(text.substr(at + 16));
        if (text.size() < head + length) asio::read(s, request, asio::transfer_exactly(head + length - text.size()), ec);
        firstRequest.set_value(std::string(asio::buffers_begin(request.data()), asio::buffers_end(request.data())));
        first = false;
      }
      held.push_back(std::move(s));
    }
  }

  std::thread thread_;
};

// What goes on the wire: the request line, Host, User-Agent, the caller's headers, the body's
// length and the body, nothing else (the API server and the dashboard see today's bytes).
TEST(HttpClientTest, ARequestGoesOutAsItsHeadAndBody) {
  SilentServer server;
  HttpClient client(server.url(), {}, std::chrono::milliseconds(300));
  EXPECT_THROW(client.request("PUT", "/apis/ray.io/v1/namespaces/d/rayjobs/a/status", R"({"a":1})",
                              {{"Content-Type", "application/json"}}),
               HttpError);
  EXPECT_EQ(server.firstRequest.get_future().get(),
            "PUT /apis/ray.io/v1/namespaces/d/rayjobs/a/status HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "User-Agent: rayjournal\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n"
            R"({"a":1})");
}

TEST(HttpClientTest, AHeaderWithALineBreakIsRefusedBeforeSending) {
  SilentServer server;
  HttpClient client(server.url(), {}, std::chrono::milliseconds(300));
  try {
    client.request("GET", "/api/v1/pods", "", {{"Authorization", "Bearer abc\r\nX-Evil: 1"}});
    FAIL() << "a header with a line break was sent";
  } catch (const HttpError& e) {
    EXPECT_NE(std::string(e.what()).find("header Authorization has a line break"), std::string::npos)
        << e.what();
  }
}

// A server that takes the request and never answers: the request fails at its timeout and
// says so, instead of holding a worker forever.
TEST(HttpClientTest, AnUnansweredRequestFailsAtItsTimeout) {
  SilentServer server;
  HttpClient client(server.url(), {}, std::chrono::milliseconds(200));
  auto start = std::chrono::steady_clock::now();
  try {
    client.request("GET", "/api/v1/pods");
    FAIL() << "an unanswered request returned";
  } catch (const HttpError& e) {
    EXPECT_NE(std::string(e.what()).find("no answer from " + server.url()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
  }
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(200));
  EXPECT_LT(took, std::chrono::seconds(5));
}

// A watch whose server goes quiet ends at its idle timeout (the caller resumes it), and
// cancelStreams() ends one that waits with a long timeout at once.
TEST(HttpClientTest, AQuietWatchEndsAtItsIdleTimeoutOrWhenCancelled) {
  TrickleServer quiet("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n{\"a\"}\n\r\n", 1024);
  HttpClient client(quiet.url(), {}, std::chrono::seconds(10));
  std::vector<std::string> lines;
  int status = client.stream("/api/v1/pods?watch=1", {}, [&](const std::string& l) {
    lines.push_back(l);
    return true;
  }, std::chrono::milliseconds(200));
  EXPECT_EQ(status, 200);
  EXPECT_EQ(lines, std::vector<std::string>{"{\"a\"}"});

  TrickleServer waiting("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", 1024);
  HttpClient second(waiting.url(), {}, std::chrono::seconds(10));
  auto watching = std::async(std::launch::async, [&] {
    return second.stream("/api/v1/pods?watch=1", {}, [](const std::string&) { return true; },
                         std::chrono::minutes(10));
  });
  while (watching.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
    second.cancelStreams();  // until the stream has started and seen it
  }
  EXPECT_EQ(watching.get(), 200);
}

// Serves HTTP/1.1 requests one after another on each connection, answering each with its own
// target. After `perConnection` answers, it ends the connection: with "Connection: close" on
// the last answer (polite) or without (cut), then shuts its side and reads until the client
// closes (no reset races the answers already sent).
class PipelineServer : public LoopbackServer {
 public:
  PipelineServer(int perConnection, bool polite) {
    thread_ = std::thread([this, perConnection, polite] { serve(perConnection, polite); });
  }
  ~PipelineServer() {
    stopAccepting();
    thread_.join();
  }
  std::atomic<int> connections{0}, requests{0};

 private:
  void serve(int perConnection, bool polite) {
    namespace bhttp = boost::beast::http;
    while (true) {
      std::optional<tcp::socket> next = accept();
      if (!next) return;
      tcp::socket s = std::move(*next);
      ++connections;
      boost::beast::flat_buffer buffer;
      boost::system::error_code ec;
      for (int n = 1; n <= perConnection && !ec; ++n) {
        bhttp::request<bhttp::string_body> req;
        bhttp::read(s, buffer, req, ec);
        if (ec) break;
        ++requests;
        bhttp::response<bhttp::string_body> res{bhttp::status::created, 11};
        res.body() = std::string(req.target());
        res.keep_alive(!(polite && n == perConnection));
        res.prepare_payload();
        bhttp::write(s, res, ec);
      }
      s.shutdown(tcp::socket::shutdown_send, ec);
      char rest[4096];
      while (!ec) s.read_some(asio::buffer(rest), ec);
    }
  }

  std::thread thread_;
};

std::vector<HttpRequest> posts(int n) {
  std::vector<HttpRequest> out;
  for (int i = 0; i < n; ++i)
    out.push_back({"POST", "/apis/events.k8s.io/v1/namespaces/d/events/" + std::to_string(i), "{}", {}});
  return out;
}

std::vector<std::string> bodiesOf(const std::vector<HttpResponse>& answers) {
  std::vector<std::string> out;
  for (const auto& a : answers) out.push_back(a.body);
  return out;
}

TEST(HttpClientTest, APipelineAnswersEveryRequestInOrderOnOneConnection) {
  PipelineServer server(100, true);
  HttpClient client(server.url(), {}, std::chrono::seconds(10));
  std::string error;
  auto answers = client.pipeline(posts(5), &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(answers.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(answers[i].status, 201);
    EXPECT_EQ(answers[i].body, "/apis/events.k8s.io/v1/namespaces/d/events/" + std::to_string(i));
  }
  EXPECT_EQ(server.connections, 1);
}

// A server that says "Connection: close" serves nothing after that answer: the requests after
// it go again on a new connection, each served once.
TEST(HttpClientTest, APipelineGoesOnAfterTheServerSaysConnectionClose) {
  PipelineServer server(2, true);
  HttpClient client(server.url(), {}, std::chrono::seconds(10));
  std::string error;
  auto answers = client.pipeline(posts(5), &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(answers.size(), 5u);
  EXPECT_EQ(answers[4].body, "/apis/events.k8s.io/v1/namespaces/d/events/4");
  EXPECT_EQ(server.connections, 3);
  EXPECT_EQ(server.requests, 5);
}

// A connection that ends without notice: the answers read are returned, the rest are reported
// unanswered and not sent again (they may have been served).
TEST(HttpClientTest, APipelineCutShortReportsTheRestUnanswered) {
  PipelineServer server(2, false);
  HttpClient client(server.url(), {}, std::chrono::seconds(10));
  std::string error;
  auto answers = client.pipeline(posts(5), &error);
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(bodiesOf(answers)[1], "/apis/events.k8s.io/v1/namespaces/d/events/1");
  EXPECT_NE(error.find("no answer from " + server.url() + " to POST /apis/events.k8s.io/v1/namespaces/d/events/2"),
            std::string::npos) << error;
  EXPECT_EQ(server.connections, 1);
}

}  // namespace
}  // namespace rayjournal::http
