// The status server answers probes even while another client stalls mid-request.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <string>

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

std::string get(int port, const std::string& path) {
  int fd = connectTo(port);
  std::string request = "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  EXPECT_EQ(::send(fd, request.data(), request.size(), 0), ssize_t(request.size()));
  std::string response;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) response.append(buffer, n);
  ::close(fd);
  return response;
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

}  // namespace
}  // namespace rayjournal::operator_
