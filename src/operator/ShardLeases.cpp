#include "operator/ShardLeases.h"

#include <spdlog/spdlog.h>

namespace rayjournal::operator_ {

int ShardLeases::bucketOf(const std::string& key) {
  uint32_t h = 2166136261u;  // FNV-1a: stable across processes and versions
  for (unsigned char ch : key) h = (h ^ ch) * 16777619u;
  return int(h % kBuckets);
}

ShardLeases::ShardLeases(kube::KubeClient& kube, int index, int count,
                         kube::LeaderElectionOptions base, std::function<void()> onAcquired,
                         std::function<void()> onLost)
    : index_(index), count_(count), onAcquired_(std::move(onAcquired)), onLost_(std::move(onLost)) {
  std::string prefix = base.name;
  for (int b = 0; b < kBuckets; ++b) {
    if (b % count_ != index_) continue;
    kube::LeaderElectionOptions o = base;
    o.name = prefix + "-bucket-" + std::to_string(b);
    electors_[b] = std::make_unique<kube::LeaderElector>(kube, o);
  }
}

ShardLeases::~ShardLeases() {
  stop();
}

bool ShardLeases::owns(const std::string& key) const {
  return bucketOf(key) % count_ == index_;
}

bool ShardLeases::holds(const std::string& key) const {
  auto it = electors_.find(bucketOf(key));
  return it != electors_.end() && it->second->isLeader();
}

int ShardLeases::held() const {
  int n = 0;
  for (const auto& [b, e] : electors_) n += e->isLeader();
  return n;
}

void ShardLeases::start() {
  spdlog::info("sharding: replica {} of {} owns {} of {} buckets", index_, count_, electors_.size(),
               kBuckets);
  for (auto& [bucket, elector] : electors_) {
    kube::LeaderElector* e = elector.get();
    threads_.emplace_back([this, e] {
      if (!e->acquire()) return;
      e->startRenewing(onLost_);
      onAcquired_();
    });
  }
}

void ShardLeases::stop() {
  for (auto& [b, e] : electors_) e->stop();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

int ordinalOf(const std::string& podName) {
  auto dash = podName.rfind('-');
  if (dash == std::string::npos || dash + 1 == podName.size()) return -1;
  std::string tail = podName.substr(dash + 1);
  if (tail.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoi(tail);
}

int shardIndexFor(int flagIndex, int shardCount, const char* hostname) {
  if (flagIndex >= 0) return flagIndex;
  if (shardCount <= 1) return 0;
  int ordinal = hostname ? ordinalOf(hostname) : -1;
  return ordinal >= 0 ? ordinal : 0;
}

}  // namespace rayjournal::operator_
