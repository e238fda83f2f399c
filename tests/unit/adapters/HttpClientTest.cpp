// The HTTP/TLS client against servers that misbehave: a TLS configuration it cannot use, an
// answer delivered one byte at a time (as a slow network or TLS records split it), an answer
// too large, a watch line that never ends.
#include "adapters/http/HttpClient.h"

#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <atomic>
#include <chrono>
#include <future>
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

// Serves one connection: reads the request head, then writes `answer` in pieces of `piece`
// bytes, each its own TCP segment, a millisecond apart, then closes.
class TrickleServer {
 public:
  TrickleServer(std::string answer, size_t piece) : acceptor_(ioc_, {asio::ip::make_address("127.0.0.1"), 0}) {
    thread_ = std::thread([this, answer = std::move(answer), piece] { serve(answer, piece); });
  }
  ~TrickleServer() { thread_.join(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()); }

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

  asio::io_context ioc_;
  tcp::acceptor acceptor_;
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
class IdleClosingServer {
 public:
  explicit IdleClosingServer(int pooled) : acceptor_(ioc_, {asio::ip::make_address("127.0.0.1"), 0}) {
    thread_ = std::thread([this, pooled] { serve(pooled); });
  }
  ~IdleClosingServer() {
    stop_ = true;
    boost::system::error_code ec;
    tcp::socket poke(ioc_);
    poke.connect(acceptor_.local_endpoint(), ec);  // ends the accept loop
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()); }
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
      tcp::socket s = acceptor_.accept();
      if (stop_) return;
      ++laterConnections;
      asio::streambuf request;
      asio::read_until(s, request, "\r\n\r\n", ec);
      asio::write(s, asio::buffer(kAnswer, sizeof kAnswer - 1), ec);
      char rest[256];
      while (!ec) s.read_some(asio::buffer(rest), ec);
    }
  }

  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
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

}  // namespace
}  // namespace rayjournal::http
