// The status server answers probes while other clients stall, idle or flood it, speaks enough
// HTTP to refuse what it does not serve, and stops at once.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "operator/StatusServer.h"

namespace rayjournal::operator_ {
namespace {

// A TCP client on 127.0.0.1 whose reads give up after 10 s, so a server that never answers
// fails the test instead of hanging it.
int connectTo(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  return fd;
}

// Sends `request` as it is and returns everything the server answers before it closes.
std::string roundTrip(int port, const std::string& request) {
  int fd = connectTo(port);
  EXPECT_EQ(::send(fd, request.data(), request.size(), 0), ssize_t(request.size()));
  std::string response;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) response.append(buffer, n);
  ::close(fd);
  return response;
}

std::string get(int port, const std::string& path, const std::string& method = "GET") {
  return roundTrip(port, method + " " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
}

using Clock = std::chrono::steady_clock;

// Raises the open-file limit as far as allowed; returns it.
rlim_t raiseFileLimit() {
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &limit);
  ::getrlimit(RLIMIT_NOFILE, &limit);
  return limit.rlim_cur;
}

TEST(StatusServerTest, AStalledClientDoesNotHoldUpProbes) {
  Metrics metrics;
  StatusServer server(
      "127.0.0.1:0", metrics, [] { return true; }, std::chrono::milliseconds(200));
  server.start();
  int stalled = connectTo(server.port());
  std::string partial = "GET /metrics HTTP/1.1\r\nHost: x\r\n";  // and then nothing more
  ASSERT_EQ(::send(stalled, partial.data(), partial.size(), 0), ssize_t(partial.size()));
  auto began = std::chrono::steady_clock::now();
  std::string healthz = get(server.port(), "/healthz");
  auto waited = std::chrono::steady_clock::now() - began;
  EXPECT_NE(healthz.find("200 OK"), std::string::npos) << healthz;
  EXPECT_NE(healthz.find("ok"), std::string::npos) << healthz;
  EXPECT_LT(waited, std::chrono::seconds(5)) << "the probe waited for the stalled client";
  EXPECT_NE(get(server.port(), "/readyz").find("200 OK"), std::string::npos);
  ::close(stalled);
  server.stop();
}

// Thousands of idle connections and slow-loris clients (each sends a header line every 50 ms and
// never finishes): every probe still answers within the kubelet's patience, nearly all within
// 100 ms.
TEST(StatusServerTest, ThousandsOfIdleAndSlowConnectionsDoNotStarveProbes) {
  size_t idle = std::min<size_t>(2000, (raiseFileLimit() - 400) / 2);
  ASSERT_GE(idle, 500u) << "too few file descriptors for the test";
  Metrics metrics;
  StatusServer server("127.0.0.1:0", metrics, [] { return true; });
  server.start();
  std::vector<int> clients;
  for (size_t i = 0; i < idle; ++i) clients.push_back(connectTo(server.port()));
  std::vector<int> slow;
  for (int i = 0; i < 200; ++i) slow.push_back(connectTo(server.port()));
  std::vector<double> millis;
  for (int probe = 0; probe < 40; ++probe) {
    for (int fd : slow) ::send(fd, "X-Slow: 1\r\n", 11, MSG_NOSIGNAL);
    auto began = Clock::now();
    std::string healthz = get(server.port(), "/healthz");
    millis.push_back(std::chrono::duration<double, std::milli>(Clock::now() - began).count());
    EXPECT_NE(healthz.find("200 OK"), std::string::npos) << "probe " << probe << ": " << healthz;
  }
  std::sort(millis.begin(), millis.end());
  EXPECT_LT(millis[millis.size() * 9 / 10], 100.0) << "90th percentile of /healthz, ms";
  EXPECT_LT(millis.back(), 1000.0) << "slowest /healthz, ms (the liveness probe's timeout)";
  for (int fd : clients) ::close(fd);
  for (int fd : slow) ::close(fd);
}

TEST(StatusServerTest, HeadHasNoBodyAndOtherMethodsAreRefused) {
  Metrics metrics;
  StatusServer server("127.0.0.1:0", metrics, [] { return true; });
  server.start();
  std::string head = get(server.port(), "/healthz", "HEAD");
  EXPECT_NE(head.find("200 OK"), std::string::npos) << head;
  EXPECT_NE(head.find("Content-Length: 3"), std::string::npos) << head;
  EXPECT_EQ(head.substr(head.find("\r\n\r\n") + 4), "") << "HEAD answered with a body";
  for (const char* method : {"DELETE", "POST", "PUT"}) {
    std::string answer = get(server.port(), "/metrics", method);
    EXPECT_NE(answer.find("405 Method Not Allowed"), std::string::npos) << method << ": " << answer;
    EXPECT_NE(answer.find("Allow: GET, HEAD"), std::string::npos) << answer;
  }
}

TEST(StatusServerTest, OversizedAndMalformedRequestsGetA4xx) {
  Metrics metrics;
  StatusServer server("127.0.0.1:0", metrics, [] { return true; });
  server.start();
  std::string huge = "GET /healthz HTTP/1.1\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n";
  EXPECT_NE(roundTrip(server.port(), huge).find("431 "), std::string::npos);
  EXPECT_NE(roundTrip(server.port(), "\x16\x03\x01 not http\r\n\r\n").find("400 Bad Request"),
            std::string::npos);
  std::string body = "POST /metrics HTTP/1.1\r\nContent-Length: 100000\r\n\r\n" + std::string(2000, 'b');
  EXPECT_NE(roundTrip(server.port(), body).find("413 "), std::string::npos);
  EXPECT_NE(get(server.port(), "/healthz").find("200 OK"), std::string::npos);
}

TEST(StatusServerTest, StopsAtOnceWithIdleConnectionsOpen) {
  Metrics metrics;
  StatusServer server("127.0.0.1:0", metrics, [] { return true; });
  server.start();
  std::vector<int> clients;
  for (int i = 0; i < 100; ++i) clients.push_back(connectTo(server.port()));
  EXPECT_NE(get(server.port(), "/readyz").find("200 OK"), std::string::npos);
  auto began = Clock::now();
  server.stop();
  EXPECT_LT(Clock::now() - began, std::chrono::milliseconds(500));
  char c;
  EXPECT_EQ(::recv(clients[0], &c, 1, 0), 0) << "an idle connection was not closed";
  for (int fd : clients) ::close(fd);
}

}  // namespace
}  // namespace rayjournal::operator_
