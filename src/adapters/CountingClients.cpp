#include "adapters/CountingClients.h"

namespace rayjournal {

void CallCounter::add(const std::string& verb, const std::string& kind,
                      const std::string& outcome) {
  std::lock_guard lock(mu_);
  counts_[{verb, kind, outcome}]++;
}

std::map<std::string, uint64_t> CallCounter::counts() const {
  std::lock_guard lock(mu_);
  std::map<std::string, uint64_t> out;
  for (const auto& [key, n] : counts_) {
    const auto& [verb, kind, outcome] = key;
    out[kind.empty() ? verb : verb + " " + kind] += n;
  }
  return out;
}

std::map<std::tuple<std::string, std::string, std::string>, uint64_t> CallCounter::byOutcome()
    const {
  std::lock_guard lock(mu_);
  return counts_;
}

template <class F>
auto CountingKubeClient::counted(const char* verb, const std::string& kind, const char* okCode,
                                 F&& call) {
  try {
    if constexpr (std::is_void_v<decltype(call())>) {
      call();
      counter_.add(verb, kind, okCode);
    } else {
      auto result = call();
      counter_.add(verb, kind, okCode);
      return result;
    }
  } catch (const kube::ApiError& e) {
    counter_.add(verb, kind, std::to_string(e.code()));
    throw;
  }
}

// A read's outcome is 200 or 404 by whether it found the object.
template <class F>
auto CountingKubeClient::countedRead(const std::string& kind, F&& call) {
  decltype(call()) found;
  try {
    found = call();
  } catch (const kube::ApiError& e) {
    counter_.add("get", kind, std::to_string(e.code()));
    throw;
  }
  counter_.add("get", kind, found ? "200" : "404");
  return found;
}

std::optional<kube::json> CountingKubeClient::get(const std::string& kind, const std::string& ns,
                                                  const std::string& name) {
  return countedRead(kind, [&] { return inner_.get(kind, ns, name); });
}

kube::Snapshot CountingKubeClient::getSnapshot(const std::string& kind, const std::string& ns,
                                               const std::string& name) {
  return countedRead(kind, [&] { return inner_.getSnapshot(kind, ns, name); });
}

std::optional<kube::json> CountingKubeClient::getLive(const std::string& kind,
                                                      const std::string& ns,
                                                      const std::string& name) {
  return countedRead(kind, [&] { return inner_.getLive(kind, ns, name); });
}

std::string CountingKubeClient::specManager(const std::string& kind, const std::string& ns,
                                            const std::string& name) {
  return counted("get", kind, "200", [&] { return inner_.specManager(kind, ns, name); });
}

std::vector<kube::json> CountingKubeClient::list(const std::string& kind, const std::string& ns,
                                                 const std::map<std::string, std::string>& l) {
  return counted("list", kind, "200", [&] { return inner_.list(kind, ns, l); });
}

void CountingKubeClient::post(const std::string& kind, kube::json object) {
  counted("create", kind, "201", [&] {
    inner_.post(kind, std::move(object));
    return 0;
  });
}

std::vector<std::optional<kube::ApiError>> CountingKubeClient::postAll(
    const std::string& kind, std::vector<kube::json> objects) {
  auto errors = inner_.postAll(kind, std::move(objects));
  for (const auto& error : errors)
    counter_.add("create", kind, error ? std::to_string(error->code()) : "201");
  return errors;
}

kube::Snapshot CountingKubeClient::create(const std::string& kind, kube::json object) {
  return counted("create", kind, "201", [&] { return inner_.create(kind, std::move(object)); });
}

kube::KubeClient::Encoded CountingKubeClient::createEncoded(const std::string& kind,
                                                          kube::json object) {
  return counted("create", kind, "201",
                 [&] { return inner_.createEncoded(kind, std::move(object)); });
}

kube::Snapshot CountingKubeClient::update(const std::string& kind, kube::json object) {
  return counted("update", kind, "200", [&] { return inner_.update(kind, std::move(object)); });
}

kube::Snapshot CountingKubeClient::updateStatus(const std::string& kind, kube::json object) {
  return counted("updateStatus", kind, "200",
                 [&] { return inner_.updateStatus(kind, std::move(object)); });
}

kube::KubeClient::Encoded CountingKubeClient::updateEncoded(const std::string& kind,
                                                          kube::json object) {
  return counted("update", kind, "200",
                 [&] { return inner_.updateEncoded(kind, std::move(object)); });
}

kube::KubeClient::Encoded CountingKubeClient::updateStatusEncoded(const std::string& kind,
                                                                const kube::json& object) {
  return counted("updateStatus", kind, "200",
                 [&] { return inner_.updateStatusEncoded(kind, object); });
}

void CountingKubeClient::remove(const std::string& kind, const std::string& ns,
                                const std::string& name, kube::Propagation p) {
  counted("delete", kind, "200", [&] { inner_.remove(kind, ns, name, p); });
}

template <class F>
auto CountingRayClient::counted(const char* verb, F&& call) {
  try {
    auto result = call();
    counter_.add(verb, "", "ok");
    return result;
  } catch (const ray::RayError&) {
    counter_.add(verb, "", "error");
    throw;
  }
}

std::optional<ray::JobInfo> CountingRayClient::getJob(const std::string& d, const std::string& id) {
  return counted("ray get", [&] { return inner_.getJob(d, id); });
}

ray::SubmitResult CountingRayClient::submit(const std::string& d, const ray::SubmitRequest& r) {
  return counted("ray submit", [&] { return inner_.submit(d, r); });
}

bool CountingRayClient::stop(const std::string& d, const std::string& id) {
  return counted("ray stop", [&] { return inner_.stop(d, id); });
}

}  // namespace rayjournal
