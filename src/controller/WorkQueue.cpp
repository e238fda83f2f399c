#include "controller/WorkQueue.h"

#include <algorithm>
#include <chrono>

namespace rayjournal::controller {

void WorkQueue::add(const std::string& key) {
  std::lock_guard lock(mu_);
  if (shutdown_) return;
  if (processing_.count(key)) {
    dirty_.insert(key);
    return;
  }
  if (queued_.insert(key).second) {
    queue_.push_back(key);
    cv_.notify_one();
  }
}

void WorkQueue::addAfter(const std::string& key, int64_t delayMs) {
  if (delayMs <= 0) return add(key);
  std::lock_guard lock(mu_);
  if (shutdown_) return;
  int64_t at = clock_.nowMs() + delayMs;
  auto it = delayedAt_.find(key);
  if (it != delayedAt_.end()) {
    if (it->second <= at) return;  // an earlier wake-up is already scheduled
    for (auto d = delayed_.lower_bound(it->second); d != delayed_.end() && d->first == it->second;
         ++d) {
      if (d->second == key) {
        delayed_.erase(d);
        break;
      }
    }
  }
  delayedAt_[key] = at;
  delayed_.emplace(at, key);
  cv_.notify_one();
}

void WorkQueue::addRateLimited(const std::string& key) {
  int n;
  {
    std::lock_guard lock(mu_);
    n = failures_[key]++;
  }
  int64_t delay = backoff_.baseMs << std::min(n, 30);
  addAfter(key, std::min(delay, backoff_.maxMs));
}

void WorkQueue::forget(const std::string& key) {
  std::lock_guard lock(mu_);
  failures_.erase(key);
}

int WorkQueue::failures(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

void WorkQueue::promoteDue() {
  int64_t now = clock_.nowMs();
  while (!delayed_.empty() && delayed_.begin()->first <= now) {
    std::string key = delayed_.begin()->second;
    delayed_.erase(delayed_.begin());
    delayedAt_.erase(key);
    if (processing_.count(key))
      dirty_.insert(key);
    else if (queued_.insert(key).second)
      queue_.push_back(key);
  }
}

std::optional<std::string> WorkQueue::get() {
  std::unique_lock lock(mu_);
  while (true) {
    if (shutdown_) return std::nullopt;
    promoteDue();
    if (!queue_.empty()) {
      std::string key = queue_.front();
      queue_.pop_front();
      queued_.erase(key);
      processing_.insert(key);
      return key;
    }
    // Delays are in Clock time, which may be simulated: poll briefly instead of sleeping until.
    cv_.wait_for(lock, std::chrono::milliseconds(delayed_.empty() ? 200 : 5));
  }
}

std::optional<std::string> WorkQueue::tryGet(const std::function<size_t(size_t)>& pick) {
  std::lock_guard lock(mu_);
  if (shutdown_) return std::nullopt;
  promoteDue();
  if (queue_.empty()) return std::nullopt;
  size_t index = pick ? pick(queue_.size()) % queue_.size() : 0;
  std::string key = queue_[index];
  queue_.erase(queue_.begin() + std::ptrdiff_t(index));
  queued_.erase(key);
  processing_.insert(key);
  return key;
}

size_t WorkQueue::ready() const {
  std::lock_guard lock(mu_);
  int64_t now = clock_.nowMs();
  size_t due = 0;
  for (auto it = delayed_.begin(); it != delayed_.end() && it->first <= now; ++it)
    due += !processing_.count(it->second) && !queued_.count(it->second);
  return queue_.size() + due;
}

void WorkQueue::done(const std::string& key) {
  std::lock_guard lock(mu_);
  processing_.erase(key);
  if (dirty_.erase(key) && !shutdown_ && queued_.insert(key).second) {
    queue_.push_back(key);
    cv_.notify_one();
  }
}

void WorkQueue::shutDown() {
  std::lock_guard lock(mu_);
  shutdown_ = true;
  cv_.notify_all();
}

void WorkQueue::wake() {
  cv_.notify_all();
}

bool WorkQueue::idle() const {
  std::lock_guard lock(mu_);
  return queue_.empty() && processing_.empty() && delayed_.empty() && dirty_.empty();
}

std::string WorkQueue::describe(size_t max) const {
  std::lock_guard lock(mu_);
  std::string out;
  size_t n = 0;
  auto add = [&](const std::string& text) {
    if (n++ < max) out += (out.empty() ? "" : ", ") + text;
  };
  for (const auto& key : queue_) add(key);
  for (const auto& key : processing_) add(key + " (running)");
  for (const auto& [at, key] : delayed_)
    add(key + " (in " + std::to_string(at - clock_.nowMs()) + " ms)");
  if (n > max) out += ", ...";
  return out;
}

size_t WorkQueue::depth() const {
  std::lock_guard lock(mu_);
  return queue_.size() + delayed_.size();
}

bool WorkQueue::pendingFor(const std::string& key) const {
  std::lock_guard lock(mu_);
  return queued_.count(key) || processing_.count(key) || delayedAt_.count(key) || dirty_.count(key);
}

}  // namespace rayjournal::controller
