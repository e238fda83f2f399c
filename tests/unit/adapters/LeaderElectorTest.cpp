// Leader election over a Lease on the simulated API server, with short real durations: one
// leader at a time, a released Lease is taken at once, and a holder that stops renewing stops
// calling itself leader before anyone else can take over (no overlap, the property the Executor's
// mayAct gate relies on).
#include "adapters/kube/LeaderElector.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <thread>

#include "adapters/sim/SimKube.h"

namespace rayjournal::kube {
namespace {

using namespace std::chrono_literals;

LeaderElectionOptions fast(const std::string& identity) {
  LeaderElectionOptions o;
  o.identity = identity;
  // Seconds, so a renewer starved by a busy CI machine (or TSan) still renews in time.
  o.leaseDuration = 3000ms;
  o.renewDeadline = 2000ms;
  o.retryPeriod = 100ms;
  return o;
}

// Waits until done() or the deadline; returns done().
template <typename F>
bool eventually(F done, std::chrono::milliseconds within) {
  auto deadline = std::chrono::steady_clock::now() + within;
  while (!done() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  return done();
}

// A container's process is pid 1 every time, and a force-deleted Pod's replacement (same
// hostname) starts beside it: identities made of hostname and pid would be equal, and each
// process would count the other's Lease as its own.
TEST(LeaderElectorTest, TwoElectorsOnOneHostWithTheSamePidHaveDifferentIdentities) {
  SystemClock clock;
  sim::SimKube kube(clock);
  LeaderElector a(kube, LeaderElectionOptions{}), b(kube, LeaderElectionOptions{});
  EXPECT_NE(a.identity(), b.identity());
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  EXPECT_EQ(a.identity().rfind(std::string(host) + "_", 0), 0u);
}

TEST(LeaderElectorTest, OneLeaderAtATimeAndAReleasedLeaseIsTakenAtOnce) {
  SystemClock clock;
  sim::SimKube kube(clock);
  LeaderElector a(kube, fast("a")), b(kube, fast("b"));
  ASSERT_TRUE(a.acquire());
  a.startRenewing([] {});
  std::atomic<bool> bWon{false};
  std::thread candidate([&] { bWon = b.acquire(); });
  // Longer than a lease duration with the holder renewing: the other candidate never wins.
  EXPECT_FALSE(eventually([&] { return bWon.load(); }, 4000ms));
  EXPECT_TRUE(a.isLeader());
  auto released = std::chrono::steady_clock::now();
  a.stop();  // gives the Lease up
  EXPECT_TRUE(eventually([&] { return bWon.load(); }, 2500ms));
  if (!bWon) b.stop();  // unblocks the candidate, so a failure fails instead of hanging
  candidate.join();
  EXPECT_LT(std::chrono::steady_clock::now() - released, 2500ms)
      << "a released Lease is taken without waiting out its duration";
  EXPECT_FALSE(a.isLeader());
  EXPECT_TRUE(b.isLeader());
  b.stop();
}

// A holder that stops renewing (stalled, partitioned) must stop calling itself leader before the
// Lease it wrote lets anyone else in.
void expectNoOverlapWhenTheHolderStalls(std::chrono::milliseconds lease,
                                        std::chrono::milliseconds renewDeadline) {
  SystemClock clock;
  sim::SimKube kube(clock);
  LeaderElectionOptions oa = fast("a"), ob = fast("b");
  oa.leaseDuration = ob.leaseDuration = lease;
  oa.renewDeadline = ob.renewDeadline = renewDeadline;
  LeaderElector a(kube, oa), b(kube, ob);
  ASSERT_TRUE(a.acquire());  // and never renews
  std::atomic<bool> overlap{false}, bWon{false};
  std::thread candidate([&] {
    bWon = b.acquire();
    if (a.isLeader()) overlap = true;
  });
  EXPECT_TRUE(eventually([&] { return bWon.load(); }, 10000ms));
  if (!bWon) b.stop();
  candidate.join();
  EXPECT_FALSE(overlap.load()) << "two processes believed they were leader at once";
  EXPECT_FALSE(a.isLeader());
  b.stop();
}

TEST(LeaderElectorTest, AHolderThatStopsRenewingIsNoLongerLeaderBeforeAnotherTakesOver) {
  expectNoOverlapWhenTheHolderStalls(3000ms, 2000ms);
}

// leaseDurationSeconds was written rounded down: a 1.5 s Lease said 1 s, and another candidate
// took it while its holder still led until its 1.2 s renew deadline.
TEST(LeaderElectorTest, AFractionalLeaseDurationIsRoundedUpSoLeadershipNeverOverlaps) {
  expectNoOverlapWhenTheHolderStalls(1500ms, 1200ms);
}

}  // namespace
}  // namespace rayjournal::kube
