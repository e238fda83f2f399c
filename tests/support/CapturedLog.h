// The default spdlog logger routed into a string for a test's lifetime; text() may be read while
// another thread logs (the sink's own lock guards the string).
#pragma once

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <mutex>
#include <string>

namespace rayjournal::testing {

class StringSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::string text() {
    std::lock_guard lock(mutex_);
    return out_;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    out_.append(formatted.data(), formatted.size());
  }
  void flush_() override {}

 private:
  std::string out_;
};

class CapturedLog {
 public:
  CapturedLog() : previous_(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>("captured", sink_);
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;
  std::string text() { return sink_->text(); }

 private:
  std::shared_ptr<StringSink> sink_ = std::make_shared<StringSink>();
  std::shared_ptr<spdlog::logger> previous_;
};

}  // namespace rayjournal::testing
