#include "projection/JournalVerifier.h"

#include <map>
#include <optional>
#include <set>

#include "events/EventCodec.h"
#include "projection/CheckpointCodec.h"
#include "projection/JobProjection.h"
#include "wal/JournalError.h"

namespace rayjournal::projection {
namespace {

using events::Action;
using events::Result;

struct PendingIntent {
  std::string key;
  Action action;
  std::string target;
  uint32_t attempt;
  std::string submissionId;
};

struct CheckpointBase {
  uint64_t coversThrough;
  std::string state;
};

struct JobTrack {
  std::string uid;
  uint32_t attempt = 0;
  bool retryingWritten = false;  // a Retrying status write landed since the last attempt start
  bool startedThisEpoch = false;
  uint64_t startSeq = 0;  // of the AttemptStarted observation
  uint32_t incarnation = 0;  // of the current attempt: scopes submissions (explicit jobIds repeat)
};

class Verifier {
 public:
  explicit Verifier(VerifyReport& report) : report_(report) {}

  void visit(const wal::Record& r, wal::Journal& journal) {
    ++report_.records;
    switch (r.type) {
      case wal::RecordType::Intent:
        intent(r);
        break;
      case wal::RecordType::Outcome:
        outcome(r);
        break;
      case wal::RecordType::Observation:
        observation(r);
        break;
      case wal::RecordType::Checkpoint:
        checkpoint(r, journal);
        break;
      case wal::RecordType::ControllerStarted:
        for (auto& [k, t] : jobs_) t.startedThisEpoch = false;
        break;
    }
    if (r.type != wal::RecordType::Checkpoint) projection_.apply(r);
    checkDue(r.seq, journal);
  }

 private:
  static std::string key(const wal::Record& r) { return r.object.ns + "/" + r.object.name; }
  void violation(uint64_t seq, const std::string& rule, const std::string& message) {
    report_.violations.push_back({seq, rule, message});
  }

  void intent(const wal::Record& r) {
    events::IntentBody body = events::decodeIntent(r);
    auto status = body.status.find("jobDeploymentStatus");
    if (body.action == Action::WriteStatus && status != body.status.end() &&
        status->second == events::StatusValue(std::string("Retrying")))
      retryingIntents_.insert(r.seq);
    intents_[r.seq] = {key(r), body.action, std::move(body.target), r.attempt,
                       std::move(body.submissionId)};
  }

  void outcome(const wal::Record& r) {
    events::OutcomeBody body = events::decodeOutcome(r);
    uint64_t intentSeq = body.intentSeq;
    auto it = intents_.find(intentSeq);
    if (it == intents_.end() && lost_.contains(intentSeq)) return;  // its Intent was salvaged away
    if (intentSeq == 0 || intentSeq >= r.seq || it == intents_.end()) {
      violation(r.seq, "outcome-without-intent",
                "Outcome seq " + std::to_string(r.seq) + " answers intent seq " +
                    std::to_string(intentSeq) + ", which is not an earlier Intent");
      return;
    }
    const PendingIntent in = it->second;
    intents_.erase(it);  // answered: memory stays proportional to what is in flight
    // Adopted, AlreadyDone and Found mean it had happened before.
    if (body.result == Result::Ok) sideEffect(r.seq, in);
    bool mayHaveLanded = body.result == Result::Ok || body.result == Result::Found ||
                         body.result == Result::Superseded;
    if (in.action == Action::WriteStatus && mayHaveLanded && retryingIntents_.count(intentSeq))
      jobs_[in.key].retryingWritten = true;
  }

  void sideEffect(uint64_t seq, const PendingIntent& in) {
    std::string identity;
    if (in.action == Action::CreateRayCluster)
      identity = "RayCluster " + in.target;
    else if (in.action == Action::CreateSubmitterJob)
      identity = "submitter Job " + in.target + " for submission " + in.submissionId;
    else if (in.action == Action::SubmitRayJob)
      identity = "Ray submission " + in.target;
    else
      return;
    if (in.action != Action::CreateRayCluster)
      identity += " in incarnation " + std::to_string(jobs_[in.key].incarnation);
    auto [it, inserted] = executed_.emplace(in.key + " " + identity, seq);
    if (!inserted) {
      violation(seq, "duplicate-side-effect",
                in.key + ": " + identity + " executed twice (outcome seqs " +
                    std::to_string(it->second) + " and " + std::to_string(seq) + ")");
    }
  }

  void observation(const wal::Record& r) {
    auto observation = events::decodeObservation(r);
    if (!observation) return;
    if (const auto* missing = std::get_if<events::ChildMissing>(&*observation)) {
      // Someone else deleted the child: recreating it under the same identity is not a duplicate.
      executed_.erase(key(r) + " submitter Job " + missing->name + " for submission " +
                      missing->jobId + " in incarnation " +
                      std::to_string(jobs_[key(r)].incarnation));
      return;
    }
    if (const auto* s = std::get_if<events::JournalSalvaged>(&*observation)) return salvaged(*s);
    if (const auto* drift = std::get_if<events::Drift>(&*observation)) {
      // Kubernetes holds a status whose write looked failed (a lost response): it did land.
      if (drift->kubernetesHas == "Retrying") jobs_[key(r)].retryingWritten = true;
      return;
    }
    const auto* started = std::get_if<events::AttemptStarted>(&*observation);
    if (!started) return;
    JobTrack& t = jobs_[key(r)];
    if (t.uid != r.object.uid) t = JobTrack{r.object.uid};
    uint32_t attempt = started->attempt;
    if (attempt < t.attempt) {
      violation(r.seq, "attempt-decreased",
                key(r) + ": attempt went from " + std::to_string(t.attempt) + " to " +
                    std::to_string(attempt));
    } else if (attempt > t.attempt && t.attempt > 0 && !t.retryingWritten &&
               !lost_.anyBetween(t.startSeq, r.seq)) {
      violation(r.seq, "attempt-without-retry",
                key(r) + ": attempt " + std::to_string(attempt) +
                    " started without a Retrying status write after attempt " +
                    std::to_string(t.attempt));
    }
    t.attempt = attempt;
    t.retryingWritten = false;
    t.startSeq = r.seq;
    t.incarnation = started->incarnation;
  }

  // A missing state is a violation unless a later salvage says it dropped it (decided at the end).
  void checkpoint(const wal::Record& r, wal::Journal& journal) {
    if (!journal.checkpointAt(r.seq)) stateless_.insert(r.seq);
  }

 public:
  void finish() {
    for (uint64_t seq : stateless_)
      violation(seq, "checkpoint-missing",
                "Checkpoint record seq " + std::to_string(seq) + " has no stored state");
  }

 private:
  void salvaged(const events::JournalSalvaged& s) {
    const auto dropped = wal::LostRanges::parse(s.droppedCheckpoints);
    for (const auto& [from, to] : dropped.ranges()) {
      auto first = stateless_.lower_bound(from);
      auto last = stateless_.upper_bound(to);
      report_.checkpointsDropped += std::distance(first, last);
      stateless_.erase(first, last);
    }
  }

 public:
  // Compares every checkpoint that covers exactly through seq with the replayed projection.
  void checkDue(uint64_t seq, wal::Journal& journal) {
    auto it = due_.find(seq);
    if (it == due_.end()) return;
    std::string replayed = projection_.checkpoint();
    for (uint64_t cpSeq : it->second) {
      compare(cpSeq, replayed, journal.checkpointAt(cpSeq)->state);
      ++report_.checkpointsChecked;
    }
  }
  void restore(const std::string& state) { projection_.restore(state); }
  std::map<uint64_t, std::vector<uint64_t>> due_;

 private:
  void compare(uint64_t seq, const std::string& replayed, const std::string& stored) {
    if (replayed != stored && replayed != inCurrentFormat(stored)) {
      violation(seq, "checkpoint-mismatch",
                "checkpoint at seq " + std::to_string(seq) +
                    " differs from the projection replayed up to it (" +
                    std::to_string(stored.size()) + " stored bytes vs " +
                    std::to_string(replayed.size()) + " replayed)");
    }
  }

 public:
  std::set<uint64_t> retryingIntents_;
  uint64_t firstSeq_ = 1;
  wal::LostRanges lost_;

 private:
  VerifyReport& report_;
  JobProjection projection_;
  std::map<uint64_t, PendingIntent> intents_;
  std::map<std::string, uint64_t> executed_;
  std::map<std::string, JobTrack> jobs_;
  std::set<uint64_t> stateless_;  // Checkpoint records without a stored state
};

}  // namespace

VerifyReport verifyJournal(wal::Journal& journal) {
  VerifyReport report;
  Verifier verifier(report);
  uint64_t start = journal.firstSeq();
  std::optional<CheckpointBase> base;
  for (uint64_t seq : journal.checkpointSeqs()) {
    auto cp = journal.checkpointAt(seq);
    if (cp->coversThrough + 1 >= start) verifier.due_[cp->coversThrough].push_back(seq);
    // After pruning, history starts at the oldest checkpoint that reaches the first record.
    if (start > 1 && !base && cp->coversThrough + 1 >= start)
      base = CheckpointBase{cp->coversThrough, cp->state};
  }
  if (base) {
    verifier.restore(base->state);
    start = base->coversThrough + 1;
  }
  verifier.firstSeq_ = start;
  verifier.lost_ = journal.lostRanges();
  report.lost = journal.lostRanges();
  for (const auto& [from, to] : journal.missingAcknowledged().ranges())
    report.violations.push_back(
        {from, "lost-acknowledged",
         "seqs " + std::to_string(from) + ".." + std::to_string(to) +
             " were acknowledged as durable (HIGHWATER) but the journal ends before them; "
             "--salvage-journal records the loss and keeps everything else"});
  journal.scan(start, [&](const wal::Record& r) {
    verifier.visit(r, journal);
    return true;
  });
  verifier.finish();
  for (auto& problem : journal.checkIndex())
    report.violations.push_back({0, "index", problem + "; rayjournal-replay reindex rebuilds it"});
  return report;
}

}  // namespace rayjournal::projection
