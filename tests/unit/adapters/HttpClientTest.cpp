// The HTTP/TLS client refuses a TLS configuration it cannot use, at construction.
#include "adapters/http/HttpClient.h"

#include <gtest/gtest.h>

namespace rayjournal::http {
namespace {

TEST(HttpClientTest, RejectsAnUnusableTlsConfiguration) {
  TlsConfig tls;
  tls.caPem = "not a certificate";
  EXPECT_THROW(HttpClient("https://127.0.0.1:1", tls, std::chrono::seconds(1)),
               HttpError);
}

}  // namespace
}  // namespace rayjournal::http
