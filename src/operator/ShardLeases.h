// Sharding across StatefulSet replicas. Every RayJob key ("ns/name") hashes to one of kBuckets
// fixed buckets; replica `index` of `count` owns the buckets b with b % count == index, and may
// act on a bucket's RayJobs only while it holds that bucket's Lease
// (<prefix>-bucket-<b>). The bucket count never changes, so when the replica count changes
// the old owner keeps acting until it releases the bucket's Lease (SIGTERM) or its lease
// expires, and only then does the new owner take it: there is never a moment with two owners.
// Thread-safe; acquisition runs in the background.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <thread>

#include "adapters/kube/LeaderElector.h"

namespace rayjournal::operator_ {

class ShardLeases {
 public:
  static constexpr int kBuckets = 32;
  ShardLeases(kube::KubeClient& kube, int index, int count, kube::LeaderElectionOptions base,
              std::function<void()> onAcquired, std::function<void()> onLost);
  ~ShardLeases();
  static int bucketOf(const std::string& key);
  bool owns(const std::string& key) const;
  bool holds(const std::string& key) const;
  int held() const;
  void start();
  void stop();  // releases every held Lease

 private:
  int index_, count_;
  std::map<int, std::unique_ptr<kube::LeaderElector>> electors_;
  std::vector<std::thread> threads_;
  std::function<void()> onAcquired_, onLost_;
};

// The shard index from a StatefulSet pod name ("rayjournal-operator-2" -> 2); -1 if none.
int ordinalOf(const std::string& podName);

// This replica's shard: the --shard-index flag when set (>= 0), else with more than one shard the
// ordinal of the pod name (hostname, may be null), else 0: with one shard every replica is a
// candidate for the one leader Lease, so rayjournal-operator-1 is a standby, not shard 1.
int shardIndexFor(int flagIndex, int shardCount, const char* hostname);

}  // namespace rayjournal::operator_
