// A 127.0.0.1 port nothing listens on: bound, then released (for "unreachable" tests).
#pragma once

#include <boost/asio/ip/tcp.hpp>

namespace rayjournal::testing {

inline int closedPort() {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor a(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
  int port = a.local_endpoint().port();
  a.close();
  return port;
}

}  // namespace rayjournal::testing
