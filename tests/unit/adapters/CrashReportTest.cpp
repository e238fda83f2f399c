#include "adapters/CrashReport.h"

#include <gtest/gtest.h>

#include <csignal>

namespace rayjournal::adapters {
namespace {

[[gnu::noinline]] void crashHere() {
  volatile int* volatile nowhere = nullptr;  // opaque to the optimizer: a real fault
  *nowhere = 1;
}

// A crash names its signal and prints the stack, and the process still dies of that signal (a
// supervisor sees the same exit status as without the report).
TEST(CrashReportDeathTest, ASegfaultPrintsTheSignalAndTheStackThenDiesOfIt) {
  if (!crashReportAvailable()) GTEST_SKIP() << "sanitizer build: the sanitizer reports crashes";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        installCrashReport();
        crashHere();
      },
      ::testing::KilledBySignal(SIGSEGV), "fatal signal SEGV.*\n.*\\(");
}

TEST(CrashReportDeathTest, AnAbortIsReportedToo) {
  if (!crashReportAvailable()) GTEST_SKIP() << "sanitizer build: the sanitizer reports crashes";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        installCrashReport();
        std::abort();
      },
      ::testing::KilledBySignal(SIGABRT), "fatal signal ABRT");
}

}  // namespace
}  // namespace rayjournal::adapters
