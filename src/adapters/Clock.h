// Time source for everything that is not pure decision logic. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace rayjournal {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t nowMs() const = 0;  // Unix milliseconds
};

class SystemClock : public Clock {
 public:
  int64_t nowMs() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

// Simulated time: moves only when told to.
class ManualClock : public Clock {
 public:
  explicit ManualClock(int64_t startMs = 1764547200000) : now_(startMs) {}
  int64_t nowMs() const override { return now_.load(); }
  void set(int64_t ms) { now_.store(ms); }
  void advance(int64_t ms) { now_.fetch_add(ms); }

 private:
  std::atomic<int64_t> now_;
};

}  // namespace rayjournal
