#include "adapters/http/DeadlineSocket.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <climits>

namespace rayjournal::http {

namespace asio = boost::asio;

bool DeadlineSocket::connectOne(const asio::ip::tcp::endpoint& endpoint, error_code& ec) {
  error_code ignored;
  socket_.close(ignored);
  socket_.open(endpoint.protocol(), ec);
  if (!ec) socket_.non_blocking(true, ec);
  if (ec) return false;
  if (::connect(socket_.native_handle(), endpoint.data(), socklen_t(endpoint.size())) != 0) {
    if (errno != EINPROGRESS) {
      ec = error_code(errno, boost::system::system_category());
      return false;
    }
    if (!wait(/*forWrite=*/true, ec)) return false;
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(socket_.native_handle(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      ec = error_code(err, boost::system::system_category());
      return false;
    }
  }
  // Requests go out whole in one write; Nagle would only delay the small ones.
  socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
  ec = {};
  return true;
}

bool DeadlineSocket::wait(bool forWrite, error_code& ec) {
  for (;;) {
    auto left = deadline_ - std::chrono::steady_clock::now();
    if (left <= decltype(left)::zero()) {
      ec = asio::error::timed_out;
      return false;
    }
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    pollfd p{socket_.native_handle(), short(forWrite ? POLLOUT : POLLIN), 0};
    int ready = ::poll(&p, 1, int(std::min<decltype(ms)>(ms, INT_MAX)));
    if (ready > 0) return true;  // ready, or an error the next read or write reports
    if (ready < 0 && errno != EINTR) {
      ec = error_code(errno, boost::system::system_category());
      return false;
    }
  }
}

bool DeadlineSocket::readableNow() {
  pollfd p{socket_.native_handle(), POLLIN, 0};
  return ::poll(&p, 1, 0) != 0;
}

void DeadlineSocket::shutdownBoth() { ::shutdown(socket_.native_handle(), SHUT_RDWR); }

void DeadlineSocket::close() {
  error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
}

}  // namespace rayjournal::http
