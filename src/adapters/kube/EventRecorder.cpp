#include "adapters/kube/EventRecorder.h"

#include <spdlog/spdlog.h>

#include "adapters/TimeFormat.h"

#include <algorithm>

namespace rayjournal::kube {

nlohmann::json eventObject(const EventDraft& d) {
  return {{"apiVersion", "events.k8s.io/v1"},
          {"kind", "Event"},
          {"metadata", {{"name", d.name}, {"namespace", d.ns}}},
          {"regarding",
           {{"apiVersion", "ray.io/v1"},
            {"kind", d.kind},
            {"name", d.objectName},
            {"namespace", d.ns},
            {"uid", d.uid}}},
          {"reason", d.reason},
          {"note", d.note},
          {"type", d.type},
          {"action", d.action},
          {"reportingController", d.reportingController},
          {"reportingInstance", d.reportingInstance},
          {"eventTime", toRfc3339Micro(d.eventTimeMs)}};
}

std::string describe(const EventDraft& d) {
  return d.reason + " for " + d.kind + " " + d.ns + "/" + d.objectName;
}

EventRecorder::EventRecorder(KubeClient& kube, size_t capacity, int posters,
                             std::chrono::milliseconds drainTimeout)
    : kube_(kube), capacity_(capacity), drainTimeout_(drainTimeout) {
  for (int i = 0; i < std::max(1, posters); ++i) threads_.emplace_back([this] { run(); });
}

EventRecorder::~EventRecorder() {
  {
    std::unique_lock lock(mu_);
    idle_.wait_for(lock, drainTimeout_, [this] { return queue_.empty() && busy_ == 0; });
    stopping_ = true;
    if (!queue_.empty())
      spdlog::warn("{} Events not posted at shutdown (the API server is slow or unreachable)",
                   queue_.size());
    queue_.clear();
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void EventRecorder::post(EventDraft event) {
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= capacity_) {
      if (dropped_++ % 1000 == 0)
        spdlog::warn("Event queue full ({} queued): dropped {} ({} dropped so far)", capacity_,
                     describe(event), dropped_.load());
      return;
    }
    queue_.push_back(std::move(event));
  }
  wake_.notify_one();
}

void EventRecorder::flush() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [this] { return (queue_.empty() && busy_ == 0) || stopping_; });
}

void EventRecorder::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) break;
    std::vector<EventDraft> batch;
    while (!queue_.empty() && batch.size() < kMaxBatch) {
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    ++busy_;
    lock.unlock();
    postBatch(batch);
    lock.lock();
    --busy_;
    if (queue_.empty() && busy_ == 0) idle_.notify_all();
  }
  idle_.notify_all();
}

void EventRecorder::postBatch(const std::vector<EventDraft>& batch) {
  std::vector<nlohmann::json> objects;
  objects.reserve(batch.size());
  for (const EventDraft& event : batch) objects.push_back(eventObject(event));
  std::vector<std::optional<ApiError>> errors;
  try {
    errors = kube_.postAll("Event", std::move(objects));
  } catch (const std::exception& e) {
    errors.assign(batch.size(), ApiError(0, "Unreachable", e.what()));
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    if (i < errors.size() && !errors[i]) {
      ++posted_;
      continue;
    }
    spdlog::warn("could not post Event {}: {}", describe(batch[i]),
                 i < errors.size() ? errors[i]->what() : "no answer");
  }
}

}  // namespace rayjournal::kube
