#include "operator/Metrics.h"

#include <charconv>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace rayjournal::operator_ {
namespace {

std::string escape(const std::string& value) {
  std::string out;
  for (char ch : value) {
    if (ch == '\\')
      out += "\\\\";
    else if (ch == '"')
      out += "\\\"";
    else if (ch == '\n')
      out += "\\n";
    else
      out += ch;
  }
  return out;
}

std::string number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof(buf), v);  // shortest exact form
  return std::string(buf, result.ptr);
}

const char* typeName(Metrics::Type t) {
  switch (t) {
    case Metrics::Type::Counter:
      return "counter";
    case Metrics::Type::Gauge:
      return "gauge";
    default:
      return "histogram";
  }
}

}  // namespace

std::string formatLabels(const Labels& labels, const std::string& extraKey,
                         const std::string& extraValue) {
  if (labels.empty() && extraKey.empty()) return "";
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : labels) {
    out += (first ? "" : ",") + k + "=\"" + escape(v) + "\"";
    first = false;
  }
  if (!extraKey.empty()) out += (first ? "" : ",") + extraKey + "=\"" + escape(extraValue) + "\"";
  return out + "}";
}

Metrics::Family& Metrics::family(const std::string& name) {
  auto it = families_.find(name);
  if (it == families_.end()) throw std::logic_error("metric " + name + " was not described");
  return it->second;
}

void Metrics::describe(const std::string& name, Type type, const std::string& help,
                       std::vector<double> buckets) {
  std::lock_guard lock(mu_);
  Family& f = families_[name];
  f.type = type;
  f.help = help;
  f.buckets = std::move(buckets);
}

void Metrics::inc(const std::string& name, const Labels& labels, double by) {
  std::lock_guard lock(mu_);
  family(name).series[labels].value += by;
}

void Metrics::set(const std::string& name, const Labels& labels, double value) {
  std::lock_guard lock(mu_);
  family(name).series[labels].value = value;
}

void Metrics::observe(const std::string& name, const Labels& labels, double value) {
  std::lock_guard lock(mu_);
  Family& f = family(name);
  Series& s = f.series[labels];
  if (s.bucketCounts.empty()) s.bucketCounts.assign(f.buckets.size(), 0);
  for (size_t i = 0; i < f.buckets.size(); ++i) {
    if (value <= f.buckets[i]) ++s.bucketCounts[i];
  }
  s.value += value;
  ++s.count;
}

void Metrics::clear(const std::string& name) {
  std::lock_guard lock(mu_);
  family(name).series.clear();
}

void Metrics::addCollector(std::function<void(Metrics&)> collector) {
  std::lock_guard lock(mu_);
  collectors_.push_back(std::move(collector));
}

std::string Metrics::render() {
  std::vector<std::function<void(Metrics&)>> collectors;
  {
    std::lock_guard lock(mu_);
    collectors = collectors_;
  }
  for (auto& c : collectors) c(*this);
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& [name, f] : families_) {
    out += "# HELP " + name + " " + f.help + "\n# TYPE " + name + " " + typeName(f.type) + "\n";
    for (const auto& [labels, s] : f.series) {
      if (f.type != Type::Histogram) {
        out += name + formatLabels(labels) + " " + number(s.value) + "\n";
        continue;
      }
      for (size_t i = 0; i < f.buckets.size(); ++i) {
        out += name + "_bucket" + formatLabels(labels, "le", number(f.buckets[i])) + " " +
               std::to_string(s.bucketCounts[i]) + "\n";
      }
      out += name + "_bucket" + formatLabels(labels, "le", "+Inf") + " " + std::to_string(s.count) +
             "\n";
      out += name + "_sum" + formatLabels(labels) + " " + number(s.value) + "\n";
      out += name + "_count" + formatLabels(labels) + " " + std::to_string(s.count) + "\n";
    }
  }
  return out;
}

}  // namespace rayjournal::operator_
