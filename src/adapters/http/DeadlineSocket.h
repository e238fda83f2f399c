// A TCP socket for synchronous HTTP: every read, write and connect waits in poll() until a
// deadline, so a blocking exchange needs no event loop, timer or handler of its own. The socket
// is non-blocking underneath: each operation is tried first and waits only when the kernel says
// it would block (an answer already there costs one recvmsg, no epoll and no timerfd).
// It meets Asio's SyncReadStream and SyncWriteStream, so asio::ssl::stream and Beast's
// synchronous read and write run over it.
// Thread-safety: one thread uses it at a time; shutdownBoth() may be called from any thread
// while another waits on it (it wakes the waiter, which then sees the end of the stream).
#pragma once

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>

namespace rayjournal::http {

class DeadlineSocket {
 public:
  using Socket = boost::asio::ip::tcp::socket;
  using lowest_layer_type = Socket::lowest_layer_type;
  using executor_type = Socket::executor_type;
  using error_code = boost::system::error_code;

  // The io_context only owns the descriptor's registration; it is never run.
  explicit DeadlineSocket(boost::asio::io_context& ioc) : socket_(ioc) {}

  executor_type get_executor() { return socket_.get_executor(); }
  lowest_layer_type& lowest_layer() { return socket_.lowest_layer(); }
  const lowest_layer_type& lowest_layer() const { return socket_.lowest_layer(); }
  Socket& socket() { return socket_; }

  // Every later operation fails with timed_out once `timeout` from now has passed.
  void expiresAfter(std::chrono::milliseconds timeout) {
    deadline_ = std::chrono::steady_clock::now() + timeout;
  }
  // Tries each endpoint in turn until one accepts; leaves the socket non-blocking, no Nagle.
  template <class Endpoints>
  void connect(const Endpoints& endpoints, error_code& ec) {
    ec = boost::asio::error::host_not_found;
    for (const auto& entry : endpoints) {
      if (connectOne(entry.endpoint(), ec)) return;
    }
  }

  template <class MutableBuffers>
  size_t read_some(const MutableBuffers& buffers, error_code& ec) {
    for (;;) {
      size_t n = socket_.read_some(buffers, ec);
      if (ec != boost::asio::error::would_block) return n;
      if (!wait(/*forWrite=*/false, ec)) return 0;
    }
  }
  template <class ConstBuffers>
  size_t write_some(const ConstBuffers& buffers, error_code& ec) {
    for (;;) {
      size_t n = socket_.write_some(buffers, ec);
      if (ec != boost::asio::error::would_block) return n;
      if (!wait(/*forWrite=*/true, ec)) return 0;
    }
  }
  template <class MutableBuffers>
  size_t read_some(const MutableBuffers& buffers) {
    error_code ec;
    size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }
  template <class ConstBuffers>
  size_t write_some(const ConstBuffers& buffers) {
    error_code ec;
    size_t n = write_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

  // Readable while idle: the peer closed it or sent something unasked. Does not block.
  bool readableNow();
  // Ends both directions at the kernel: a waiter in another thread wakes and reads the end.
  void shutdownBoth();
  void close();

 private:
  bool connectOne(const boost::asio::ip::tcp::endpoint& endpoint, error_code& ec);
  // Until the descriptor is ready or the deadline passes (ec = timed_out, returns false).
  bool wait(bool forWrite, error_code& ec);

  Socket socket_;
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
};

}  // namespace rayjournal::http
