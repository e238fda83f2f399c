// The one generic worker loop: the result of a reconcile decides what happens to its key.
#include "runtime/Controller.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace rayjournal::runtime {
namespace {

class ScriptedReconciler : public Reconciler {
 public:
  std::map<std::string, Result> next;  // what each key answers
  std::map<std::string, int> calls;
  std::atomic<int> concurrent{0}, maxConcurrent{0};
  bool throwing = false;

  Result reconcile(const std::string& key) override {
    int now = ++concurrent;
    for (int seen = maxConcurrent; now > seen && !maxConcurrent.compare_exchange_weak(seen, now);) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::lock_guard lock(mu_);
    ++calls[key];
    --concurrent;
    if (throwing) throw std::runtime_error("boom");
    return next[key];
  }
  std::vector<Result> reconcileMany(const std::vector<std::string>& keys) override {
    {
      std::lock_guard lock(mu_);
      batches.push_back(keys);
    }
    return Reconciler::reconcileMany(keys);
  }
  std::vector<std::vector<std::string>> batches;

 private:
  std::mutex mu_;
};

TEST(ControllerTest, AnErrorRequeuesWithGrowingBackoff) {
  ManualClock clock;
  ScriptedReconciler r;
  r.next["ns/a"].error = true;
  Controller c(r, clock, {"Test", 0, 1, {}, {}});
  c.enqueue("ns/a");
  EXPECT_TRUE(c.runOne());
  EXPECT_FALSE(c.runOne()) << "backed off, not ready yet";
  EXPECT_EQ(c.queue().failures("ns/a"), 1);
  clock.advance(1000);
  EXPECT_TRUE(c.runOne());
  EXPECT_EQ(c.queue().failures("ns/a"), 2);
  r.next["ns/a"].error = false;
  clock.advance(100000);
  EXPECT_TRUE(c.runOne());
  EXPECT_EQ(c.queue().failures("ns/a"), 0) << "success forgets the backoff";
  EXPECT_TRUE(c.queue().idle());
}

TEST(ControllerTest, AThrowIsAnErrorNotACrash) {
  ManualClock clock;
  ScriptedReconciler r;
  r.throwing = true;
  Controller c(r, clock, {"Test", 0, 1, {}, {}});
  c.enqueue("ns/a");
  EXPECT_TRUE(c.runOne());
  EXPECT_EQ(c.queue().failures("ns/a"), 1);
}

TEST(ControllerTest, RequeueAfterRunsTheKeyAgainLater) {
  ManualClock clock;
  ScriptedReconciler r;
  r.next["ns/a"].requeueAfterMs = 3000;
  Controller c(r, clock, {"Test", 0, 1, {}, {}});
  c.enqueue("ns/a");
  EXPECT_TRUE(c.runOne());
  clock.advance(2999);
  EXPECT_FALSE(c.runOne());
  clock.advance(1);
  EXPECT_TRUE(c.runOne());
  EXPECT_EQ(r.calls["ns/a"], 2);
}

TEST(ControllerTest, AKeyItMayNotReconcileIsDeferredNotRun) {
  ManualClock clock;
  ScriptedReconciler r;
  bool may = false;
  Controller c(r, clock, {"Test", 0, 1, [&](const std::string&) { return may; }, {}});
  c.enqueue("ns/a");
  EXPECT_TRUE(c.runOne());
  EXPECT_EQ(r.calls["ns/a"], 0);
  may = true;
  clock.advance(1000);
  EXPECT_TRUE(c.runOne());
  EXPECT_EQ(r.calls["ns/a"], 1);
}

TEST(ControllerTest, SteppedPickChoosesAmongReadyKeys) {
  ManualClock clock;
  ScriptedReconciler r;
  Controller c(r, clock, {"Test", 0, 1, {}, {}});
  for (const char* k : {"ns/a", "ns/b", "ns/c"}) c.enqueue(k);
  EXPECT_TRUE(c.runOne([](size_t n) { return n - 1; }));
  EXPECT_EQ(r.calls["ns/c"], 1);
  EXPECT_EQ(r.calls["ns/a"], 0);
}

TEST(ControllerTest, OneKeyNeverRunsOnTwoWorkersAtOnce) {
  SystemClock clock;
  ScriptedReconciler r;
  std::atomic<int> results{0};
  Controller c(r, clock,
               {"Test", 4, 16, {}, [&](const std::string&, const Result&, double) { ++results; }});
  c.start();
  for (int i = 0; i < 200; ++i) c.enqueue("ns/only");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!c.queue().idle() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  c.stop();
  EXPECT_EQ(r.maxConcurrent.load(), 1);
  EXPECT_GE(results.load(), 1);
}

TEST(ControllerTest, ReadyKeysGoToTheReconcilerAsOneBatch) {
  ManualClock clock;
  ScriptedReconciler r;
  Controller c(r, clock, {"Test", 0, 16, {}, {}});
  for (const char* k : {"ns/a", "ns/b", "ns/c", "ns/d"}) c.enqueue(k);
  EXPECT_TRUE(c.runOne({}, 3));
  ASSERT_EQ(r.batches.size(), 1u);
  EXPECT_EQ(r.batches[0], (std::vector<std::string>{"ns/a", "ns/b", "ns/c"}));
  EXPECT_EQ(c.reconciles(), 3u);
  EXPECT_TRUE(c.runOne({}, 3));
  EXPECT_EQ(r.batches.back(), std::vector<std::string>{"ns/d"}) << "only what is ready";
}

TEST(ControllerTest, EachKeyOfABatchGetsItsOwnResult) {
  ManualClock clock;
  ScriptedReconciler r;
  r.next["ns/bad"].error = true;
  r.next["ns/later"].requeueAfterMs = 500;
  Controller c(r, clock, {"Test", 0, 16, {}, {}});
  for (const char* k : {"ns/bad", "ns/later", "ns/fine"}) c.enqueue(k);
  EXPECT_TRUE(c.runOne({}, 3));
  EXPECT_EQ(c.queue().failures("ns/bad"), 1);
  EXPECT_EQ(c.queue().failures("ns/later"), 0);
  EXPECT_TRUE(c.queue().pendingFor("ns/later"));
  EXPECT_FALSE(c.queue().pendingFor("ns/fine"));
}

TEST(ControllerTest, ABatchThatThrowsBacksOffEveryKeyInIt) {
  ManualClock clock;
  ScriptedReconciler r;
  r.throwing = true;
  Controller c(r, clock, {"Test", 0, 16, {}, {}});
  c.enqueue("ns/a");
  c.enqueue("ns/b");
  EXPECT_TRUE(c.runOne({}, 2));
  EXPECT_EQ(c.queue().failures("ns/a"), 1);
  EXPECT_EQ(c.queue().failures("ns/b"), 1);
}

TEST(ControllerTest, AKeyItMayNotReconcileLeavesTheRestOfTheBatchAlone) {
  ManualClock clock;
  ScriptedReconciler r;
  Controller c(r, clock,
               {"Test", 0, 16, [](const std::string& key) { return key != "ns/other-shard"; }, {}});
  c.enqueue("ns/mine");
  c.enqueue("ns/other-shard");
  EXPECT_TRUE(c.runOne({}, 2));
  EXPECT_EQ(r.calls["ns/mine"], 1);
  EXPECT_EQ(r.calls["ns/other-shard"], 0);
  EXPECT_TRUE(c.queue().pendingFor("ns/other-shard")) << "looked at again later";
}

}  // namespace
}  // namespace rayjournal::runtime
