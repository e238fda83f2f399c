#include "adapters/kube/RateLimiter.h"

#include <algorithm>
#include <thread>

namespace rayjournal::kube {

RateLimiter::RateLimiter(double qps, int burst)
    : qps_(qps),
      burst_(std::max(1, burst)),
      tokens_(burst_),
      last_(std::chrono::steady_clock::now()) {}

void RateLimiter::refill(std::chrono::steady_clock::time_point now) {
  double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
  last_ = now;
}

std::chrono::microseconds RateLimiter::wouldWait() {
  if (qps_ <= 0) return {};
  std::lock_guard lock(mu_);
  refill(std::chrono::steady_clock::now());
  if (tokens_ >= 1) return {};
  return std::chrono::microseconds(int64_t((1 - tokens_) / qps_ * 1e6));
}

void RateLimiter::acquire() {
  if (qps_ <= 0) return;
  std::chrono::microseconds wait;
  {
    std::lock_guard lock(mu_);
    refill(std::chrono::steady_clock::now());
    // Take the token now (possibly going negative) so waiters queue in order.
    tokens_ -= 1;
    if (tokens_ >= 0) return;
    wait = std::chrono::microseconds(int64_t(-tokens_ / qps_ * 1e6));
  }
  std::this_thread::sleep_for(wait);
}

}  // namespace rayjournal::kube
