// A small Prometheus registry: counters, gauges and histograms with labels, rendered in the
// text exposition format (version 0.0.4). Collectors run at scrape time to set gauges that
// mirror state (RayJobs by status, queue depth, journal figures). Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace rayjournal::operator_ {

using Labels = std::map<std::string, std::string>;

class Metrics {
 public:
  enum class Type { Counter, Gauge, Histogram };
  void describe(const std::string& name, Type type, const std::string& help,
                std::vector<double> buckets = {});
  void inc(const std::string& name, const Labels& labels = {}, double by = 1);
  void set(const std::string& name, const Labels& labels, double value);
  void observe(const std::string& name, const Labels& labels, double value);
  // Drops every series of a family (a collector rebuilding it from current state).
  void clear(const std::string& name);
  void addCollector(std::function<void(Metrics&)> collector);
  std::string render();

 private:
  struct Series {
    double value = 0;
    std::vector<uint64_t> bucketCounts;  // histogram: cumulative at render time
    uint64_t count = 0;
  };
  struct Family {
    Type type = Type::Counter;
    std::string help;
    std::vector<double> buckets;
    std::map<Labels, Series> series;
  };
  Family& family(const std::string& name);

  std::mutex mu_;
  std::map<std::string, Family> families_;
  std::vector<std::function<void(Metrics&)>> collectors_;
};

std::string formatLabels(const Labels& labels, const std::string& extraKey = "",
                         const std::string& extraValue = "");

}  // namespace rayjournal::operator_
