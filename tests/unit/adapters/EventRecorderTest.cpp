// Events leave the reconcile path: a slow API server never makes post() wait, a full queue
// drops (and counts) rather than grows, and what was queued is created in order.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "adapters/kube/EventRecorder.h"
#include "adapters/sim/SimKube.h"

namespace rayjournal::kube {
namespace {

using nlohmann::json;

// The simulated API server, except that Event creates wait until released.
struct HeldEventsKube : sim::SimKube {
  using SimKube::SimKube;
  std::mutex mu;
  std::condition_variable cv;
  bool released = false;
  Snapshot create(const std::string& kind, json object) override {
    if (kind == "Event") {
      std::unique_lock lock(mu);
      cv.wait(lock, [this] { return released; });
    }
    return SimKube::create(kind, std::move(object));
  }
  std::atomic<int> batches{0};
  std::vector<std::optional<ApiError>> postAll(const std::string& kind,
                                               std::vector<json> objects) override {
    ++batches;
    return SimKube::postAll(kind, std::move(objects));
  }
  void release() {
    {
      std::lock_guard lock(mu);
      released = true;
    }
    cv.notify_all();
  }
};

EventDraft event(int i) {
  EventDraft draft;
  draft.name = "e" + std::to_string(i);
  draft.kind = "RayJob";
  draft.ns = "default";
  draft.objectName = "j";
  draft.reason = "Created";
  return draft;
}

TEST(EventRecorderTest, PostDoesNotWaitForTheApiServerAndEveryQueuedEventIsCreated) {
  ManualClock clock;
  HeldEventsKube kube(clock);
  EventRecorder recorder(kube, 100);
  for (int i = 0; i < 10; ++i) recorder.post(event(i));  // returns with every create held
  EXPECT_EQ(kube.list("Event", "default").size(), 0u);
  kube.release();
  recorder.flush();
  EXPECT_EQ(kube.list("Event", "default").size(), 10u);
  EXPECT_EQ(recorder.posted(), 10u);
  EXPECT_EQ(recorder.dropped(), 0u);
}

// Drafts queued while the posters are busy leave together (pipelined on one connection by the
// REST client), not one create each.
TEST(EventRecorderTest, QueuedEventsArePostedInBatches) {
  ManualClock clock;
  HeldEventsKube kube(clock);
  EventRecorder recorder(kube, 100, 2);
  for (int i = 0; i < 40; ++i) recorder.post(event(i));
  kube.release();
  recorder.flush();
  EXPECT_EQ(recorder.posted(), 40u);
  EXPECT_EQ(kube.list("Event", "default").size(), 40u);
  // Each poster took what was queued when it woke, at most kMaxBatch; both were held on their
  // first create while the rest queued.
  EXPECT_LE(kube.batches, 4);
}

TEST(EventRecorderTest, AFullQueueDropsNewEventsInsteadOfGrowing) {
  ManualClock clock;
  HeldEventsKube kube(clock);
  EventRecorder recorder(kube, 3, 1);
  for (int i = 0; i < 20; ++i) recorder.post(event(i));
  kube.release();
  recorder.flush();
  size_t created = kube.list("Event", "default").size();
  EXPECT_LE(created, 6u) << "3 queued, at most one full queue already taken by the one poster";
  EXPECT_EQ(created + recorder.dropped(), 20u);
}

}  // namespace
}  // namespace rayjournal::kube
