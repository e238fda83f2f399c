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

namespace rayjournal::kube {

namespace {

std::string_view nextSegment(std::string_view& rest) {
  while (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
  size_t end = rest.find('/');
  std::string_view segment = rest.substr(0, end);
  rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
  return segment;
}

}  // namespace

std::string resourceOfPath(std::string_view path) {
  path = path.substr(0, path.find('?'));
  std::string_view rest = path;
  std::string_view root = nextSegment(rest);
  if (root == "api") {
    nextSegment(rest);  // version
  } else if (root == "apis") {
    nextSegment(rest);  // group
    nextSegment(rest);  // version
  } else {
    return std::string(root);
  }
  std::string_view resource = nextSegment(rest);
  if (resource == "namespaces") {
    std::string_view afterNamespace = rest;
    nextSegment(afterNamespace);  // the namespace's name
    std::string_view namespaced = nextSegment(afterNamespace);
    if (!namespaced.empty()) resource = namespaced;
  }
  return std::string(resource);
}

RateLimiter& ResourceRateLimiters::forPath(std::string_view path) {
  std::string resource = resourceOfPath(path);
  std::lock_guard lock(mu_);
  auto it = buckets_.find(resource);
  if (it == buckets_.end())
    it = buckets_.emplace(resource, std::make_unique<RateLimiter>(qps_, burst_)).first;
  return *it->second;
}

}  // namespace rayjournal::kube
