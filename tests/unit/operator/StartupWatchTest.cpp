// A stop signal during start-up ends the process at once, naming the phase; a phase that stops
// by itself is left to do so; a long phase is logged while it lasts.
#include "operator/StartupWatch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <string>

#include "support/CapturedLog.h"

namespace rayjournal::operator_ {
namespace {

using namespace std::chrono_literals;

using rayjournal::testing::CapturedLog;

TEST(StartupWatchTest, ASignalDuringStartUpExitsAtOnceNamingThePhase) {
  CapturedLog log;
  std::atomic<int> signal{0};
  std::promise<int> exited;
  StartupWatch watch([&] { return signal.load(); }, 5s, [&](int code) { exited.set_value(code); });
  watch.phase("waiting for the API server https://10.0.0.1:6443");
  signal = 15;
  auto future = exited.get_future();
  ASSERT_EQ(future.wait_for(2s), std::future_status::ready) << "the watch did not end start-up";
  EXPECT_EQ(future.get(), 0);
  EXPECT_NE(log.text().find("signal 15 during start-up while waiting for the API server "
                            "https://10.0.0.1:6443"),
            std::string::npos)
      << log.text();
}

TEST(StartupWatchTest, APhaseThatStopsOnASignalIsLeftToStop) {
  std::atomic<int> signal{15};
  std::atomic<bool> exited{false};
  StartupWatch watch([&] { return signal.load(); }, 5s, [&](int) { exited = true; });
  watch.phase("waiting to become the leader", true);
  std::this_thread::sleep_for(300ms);  // six polls of the watch
  EXPECT_FALSE(exited);
  watch.running();
  EXPECT_FALSE(exited);
}

TEST(StartupWatchTest, ALongPhaseIsLoggedWhileItLasts) {
  CapturedLog log;
  StartupWatch watch([] { return 0; }, 100ms, [](int) { FAIL() << "exited without a signal"; });
  watch.phase("filling the informer caches");
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (log.text().find("still filling the informer caches") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  watch.running();
  EXPECT_NE(log.text().find("start-up: still filling the informer caches"), std::string::npos)
      << log.text();
}

}  // namespace
}  // namespace rayjournal::operator_
