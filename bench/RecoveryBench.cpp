#include "RecoveryBench.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>

#include "adapters/sim/SimRay.h"
#include "controller/Recovery.h"
#include "events/EventCodec.h"
#include "events/JournalBodies.h"
#include "projection/JobProjection.h"
#include "wal/Journal.h"

namespace rayjournal::bench {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

wal::Record record(int job, wal::RecordType type, std::string body) {
  wal::Record r;
  r.type = type;
  r.object = {"RayJob", "default", "job-" + std::to_string(job), "uid-" + std::to_string(job)};
  r.attempt = 1;
  r.body = std::move(body);
  return r;
}

// Writes the history; returns the number of records written.
uint64_t build(const std::string& dir, const RecoveryOptions& o, bool checkpoint) {
  std::filesystem::remove_all(dir);
  wal::JournalOptions jo;
  jo.lazyFlushInterval = std::chrono::milliseconds(0);
  auto journal = wal::Journal::open(dir, events::journalOptions(jo));
  projection::JobProjection projection;
  journal->setAppendListener([&](const wal::Record& r) { projection.apply(r); });
  std::vector<wal::Record> batch;
  auto flush = [&] {
    if (!batch.empty()) journal->appendBatch(std::move(batch), wal::Durability::Lazy);
    batch.clear();
  };
  uint64_t seq = 0;
  for (int j = 0; j < o.jobs; ++j) {
    batch.push_back(record(j, wal::RecordType::Observation,
                           events::encode(events::AttemptStarted{
                               1, 1, "job-" + std::to_string(j) + "-abcde",
                               "job-" + std::to_string(j) + "-fghjk"})));
    ++seq;
    if (batch.size() >= 1000) flush();
  }
  flush();
  uint64_t target = o.historyRecords - (checkpoint ? o.tailRecords : 0);
  for (uint64_t i = 0; journal->latestSeq() < target; ++i) {
    int j = int(i % uint64_t(o.jobs));
    uint64_t intent = journal->latestSeq() + batch.size() + 1;
    events::IntentBody write{events::Action::WriteStatus, "job-" + std::to_string(j), "", {}, "",
                             "", ""};
    write.status = {{"jobDeploymentStatus", std::string("Running")},
                    {"jobStatus", std::string("RUNNING")}};
    batch.push_back(record(j, wal::RecordType::Intent, events::encode(write)));
    batch.push_back(record(j, wal::RecordType::Outcome,
                           events::encode(events::OutcomeBody{intent, events::Action::WriteStatus,
                                                              write.target, events::Result::Ok,
                                                              "", std::nullopt})));
    if (batch.size() >= 1000) flush();
  }
  flush();
  if (checkpoint) {
    auto [state, covers] = projection.snapshot();
    journal->writeCheckpoint(covers, state);
    while (journal->latestSeq() < o.historyRecords) {
      int j = int(journal->latestSeq() % uint64_t(o.jobs));
      batch.push_back(record(j, wal::RecordType::Observation,
                             events::encode(events::Drift{"Running", "Running", "tail"})));
      if (batch.size() >= 1000) flush();
    }
    flush();
  }
  for (int k = 0; k < o.inDoubt; ++k) {
    batch.push_back(record(k % o.jobs, wal::RecordType::Intent,
                           events::encode(events::IntentBody{
                               events::Action::CreateRayCluster,
                               "job-" + std::to_string(k % o.jobs) + "-abcde", "", {}, "", "",
                               ""})));
  }
  flush();
  journal->sync();
  return journal->latestSeq();
}

json measure(const std::string& dir) {
  SystemClock clock;
  sim::SimKube kube(clock);
  sim::SimRay ray(kube, clock);
  auto start = Clock::now();
  auto journal = wal::Journal::open(dir);
  double openSeconds = std::chrono::duration<double>(Clock::now() - start).count();
  projection::JobProjection projection;
  auto report = controller::recover(*journal, projection, kube, ray);
  double total = std::chrono::duration<double>(Clock::now() - start).count();
  auto cp = journal->latestCheckpoint();
  return {{"restart_seconds", total},
          {"open_seconds", openSeconds},
          {"replayed_records", report.replayedRecords},
          {"in_doubt_resolved", report.inDoubt},
          {"checkpoint_bytes", cp ? cp->state.size() : 0},
          {"projection_jobs", projection.jobCount()},
          {"checkpoint_bytes_per_job",
           cp ? double(cp->state.size()) / std::max<size_t>(1, projection.jobCount()) : 0.0}};
}

}  // namespace

json runRecovery(const RecoveryOptions& o) {
  spdlog::set_level(spdlog::level::warn);
  json out{{"jobs", o.jobs}, {"history_records", o.historyRecords}, {"in_doubt", o.inDoubt}};
  for (bool checkpoint : {true, false}) {
    std::string dir = o.dir + (checkpoint ? "/with-checkpoint" : "/without-checkpoint");
    if (o.reuse && !std::filesystem::exists(dir)) continue;
    auto start = Clock::now();
    uint64_t records = o.reuse ? 0 : build(dir, o, checkpoint);
    double buildSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    json m = measure(dir);
    if (!o.reuse) {
      m["records"] = records;
      m["build_seconds"] = buildSeconds;
    }
    if (o.keep || o.reuse) m["dir"] = dir;
    out[checkpoint ? "with_checkpoint" : "without_checkpoint"] = m;
    if (!o.keep && !o.reuse) std::filesystem::remove_all(dir);
  }
  return out;
}

}  // namespace rayjournal::bench
