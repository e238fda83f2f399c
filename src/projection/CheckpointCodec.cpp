#include "projection/CheckpointCodec.h"

#include <stdexcept>

#include "events/EventCodec.h"

namespace rayjournal::projection {
namespace {

constexpr char kMagic[] = "RJP5";  // RJP4's states, each length-prefixed and flagged: decoded lazily
constexpr char kMagicV4[] = "RJP4";  // RayJobs, then RayClusters, with replica and submit failures
constexpr char kMagicV3[] = "RJP3";  // RayJobs, then RayClusters
constexpr char kMagicV2[] = "RJP2";  // RayJobs only (before the RayCluster side was journaled)

class Out {
 public:
  void u(uint64_t v) {
    while (v >= 0x80) {
      s_.push_back(char((v & 0x7f) | 0x80));
      v >>= 7;
    }
    s_.push_back(char(v));
  }
  void i(int64_t v) { u((uint64_t(v) << 1) ^ uint64_t(v >> 63)); }
  void str(std::string_view v) {
    u(v.size());
    s_.append(v);
  }
  std::string& bytes() { return s_; }

 private:
  std::string s_;
};

class In {
 public:
  explicit In(std::string_view s) : s_(s) {}
  uint64_t u() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      need(1);
      uint8_t b = uint8_t(s_[pos_++]);
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    throw std::invalid_argument("checkpoint: malformed varint");
  }
  int64_t i() {
    uint64_t v = u();
    return int64_t(v >> 1) ^ -int64_t(v & 1);
  }
  std::string str() {
    uint64_t n = u();
    need(n);
    std::string v(s_.substr(pos_, n));
    pos_ += n;
    return v;
  }
  std::string_view view() {
    uint64_t n = u();
    need(n);
    std::string_view v = s_.substr(pos_, n);
    pos_ += n;
    return v;
  }
  void skip(size_t n) {
    need(n);
    pos_ += n;
  }
  bool done() const { return pos_ == s_.size(); }

 private:
  void need(uint64_t n) const {
    if (s_.size() - pos_ < n) throw std::invalid_argument("checkpoint: truncated");
  }
  std::string_view s_;
  size_t pos_ = 0;
};

void encodeJob(Out& out, const JobState& s) {
  out.str(s.uid);
  out.u(s.attempt);
  out.u(s.incarnations);
  out.i(s.firstStartMs);
  out.i(s.attemptStartMs);
  out.u(s.attempts.size());
  for (const auto& a : s.attempts) {
    out.u(a.attempt);
    out.u(a.incarnation);
    out.str(a.rayClusterName);
    out.str(a.jobId);
    out.i(a.startMs);
  }
  out.u(s.intents.size());
  for (const auto& [seq, f] : s.intents) {
    out.u(f.seq);
    out.str(events::actionName(f.action));
    out.str(f.target);
    out.u(f.attempt);
    out.i(f.timeMs);
    out.u(f.epoch);
    out.str(f.outcome ? events::resultName(*f.outcome) : "");
    out.str(f.status.empty() ? "" : events::encodeStatus(f.status));
  }
  out.u(s.inDoubt.size());
  for (uint64_t seq : s.inDoubt) out.u(seq);
  out.u(s.submissions.size());
  for (const auto& [id, t] : s.submissions) {
    out.str(id);
    out.i(t);
  }
  out.u(s.stopRequests.size());
  for (const auto& [id, n] : s.stopRequests) {
    out.str(id);
    out.u(uint64_t(n));
  }
  out.str(s.lastRayStatus);
  out.str(s.lastDeploymentStatus);
  out.u(uint64_t(s.drifts));
  out.str(s.replicaFailureReason);
  out.str(s.replicaFailureMessage);
  out.str(s.lastSubmitError);
}

// An RJP5 body's optional tail: sections, each tag and length-prefixed bytes, in tag order, a
// section only when not empty (so a body without any is one written before they existed).
enum TailTag : uint64_t { kWorkerIndexTag = 1, kIgnoredFieldsTag = 2 };

void encodeTail(Out& out, const JobState& s) {
  Out section;
  if (!s.nextWorkerIndex.empty()) {
    section.u(s.nextWorkerIndex.size());
    for (const auto& [group, next] : s.nextWorkerIndex) {
      section.str(group);
      section.u(next);
    }
    out.u(kWorkerIndexTag);
    out.str(section.bytes());
  }
  if (!s.ignoredFields.empty()) {
    section.bytes().clear();
    section.u(s.ignoredFields.size());
    for (const auto& path : s.ignoredFields) section.str(path);
    out.u(kIgnoredFieldsTag);
    out.str(section.bytes());
  }
}

void decodeTailSection(uint64_t tag, In& in, JobState& s) {
  const uint64_t n = in.u();
  const uint64_t most = tag == kWorkerIndexTag ? kMaxWorkerGroupsKept : kMaxIgnoredFieldsKept;
  if (n == 0 || n > most)
    throw std::invalid_argument("checkpoint: " + std::to_string(n) + " entries in section " +
                                std::to_string(tag));
  for (uint64_t i = 0; i < n; ++i) {
    std::string key = in.str();
    if (tag == kWorkerIndexTag)
      s.nextWorkerIndex.emplace(std::move(key), in.u());
    else
      s.ignoredFields.insert(std::move(key));
  }
  if (!in.done()) throw std::invalid_argument("checkpoint: trailing bytes in section " + std::to_string(tag));
}

void decodeTail(In& in, JobState& s) {
  uint64_t last = 0;
  while (!in.done()) {
    const uint64_t tag = in.u();
    if (tag <= last || tag > kIgnoredFieldsTag)
      throw std::invalid_argument("checkpoint: unknown or repeated section " + std::to_string(tag));
    last = tag;
    In section(in.view());
    decodeTailSection(tag, section, s);
  }
}

JobState decodeJob(In& in, bool withReplicaFailure) {
  JobState s;
  s.uid = in.str();
  s.attempt = uint32_t(in.u());
  s.incarnations = uint32_t(in.u());
  s.firstStartMs = in.i();
  s.attemptStartMs = in.i();
  for (uint64_t n = in.u(); n > 0; --n) {
    AttemptFact a;
    a.attempt = uint32_t(in.u());
    a.incarnation = uint32_t(in.u());
    a.rayClusterName = in.str();
    a.jobId = in.str();
    a.startMs = in.i();
    s.attempts.push_back(std::move(a));
  }
  for (uint64_t n = in.u(); n > 0; --n) {
    IntentFact f;
    f.seq = in.u();
    std::string action = in.str();
    auto known = events::actionFromName(action);
    if (!known) throw std::invalid_argument("checkpoint: unknown action \"" + action + "\"");
    f.action = *known;
    f.target = in.str();
    f.attempt = uint32_t(in.u());
    f.timeMs = in.i();
    f.epoch = in.u();
    std::string outcome = in.str();
    if (!outcome.empty()) {
      f.outcome = events::resultFromName(outcome);
      if (!f.outcome)
        throw std::invalid_argument("checkpoint: unknown outcome \"" + outcome + "\"");
    }
    std::string status = in.str();
    if (!status.empty()) f.status = events::decodeStatus(status);
    uint64_t seq = f.seq;
    s.intents.emplace(seq, std::move(f));
  }
  for (uint64_t n = in.u(); n > 0; --n) s.inDoubt.insert(in.u());
  for (uint64_t n = in.u(); n > 0; --n) {
    std::string id = in.str();
    s.submissions.emplace(std::move(id), in.i());
  }
  for (uint64_t n = in.u(); n > 0; --n) {
    std::string id = in.str();
    s.stopRequests.emplace(std::move(id), int(in.u()));
  }
  s.lastRayStatus = in.str();
  s.lastDeploymentStatus = in.str();
  s.drifts = int(in.u());
  if (withReplicaFailure) {
    s.replicaFailureReason = in.str();
    s.replicaFailureMessage = in.str();
    s.lastSubmitError = in.str();
  }
  return s;
}

}  // namespace

bool isBinaryCheckpoint(const std::string& bytes) {
  return bytes.compare(0, 4, kMagic) == 0 || bytes.compare(0, 4, kMagicV4) == 0 ||
         bytes.compare(0, 4, kMagicV3) == 0 || bytes.compare(0, 4, kMagicV2) == 0;
}

namespace {

void encodeStatesV4(Out& out, const std::map<std::string, JobState>& states) {
  out.u(states.size());
  for (const auto& [key, state] : states) {
    out.str(key);
    encodeJob(out, state);
  }
}

void decodeStatesV4(In& in, std::map<std::string, JobState>& states, bool withReplicaFailure) {
  for (uint64_t n = in.u(); n > 0; --n) {
    std::string key = in.str();
    states.emplace_hint(states.end(), std::move(key), decodeJob(in, withReplicaFailure));
  }
}

void putEntry(Out& out, std::string_view key, bool inDoubt, std::string_view body) {
  out.str(key);
  out.u(inDoubt ? 1 : 0);
  out.u(body.size());
  out.bytes().append(body);
}

// The decoded states and the still-encoded ones, merged in key order (a key is in one of them).
void encodeStates(Out& out, const std::map<std::string, JobState>& states,
                  const std::vector<EncodedState>& untouched) {
  size_t count = states.size();
  for (const auto& e : untouched) count += !e.taken;
  out.u(count);
  auto decoded = states.begin();
  auto encoded = untouched.begin();
  Out body;
  while (decoded != states.end() || encoded != untouched.end()) {
    if (encoded != untouched.end() && encoded->taken) {
      ++encoded;
    } else if (decoded == states.end() ||
               (encoded != untouched.end() && encoded->key < decoded->first)) {
      putEntry(out, encoded->key, encoded->inDoubt, encoded->body);
      ++encoded;
    } else {
      body.bytes().clear();
      encodeJob(body, decoded->second);
      encodeTail(body, decoded->second);
      putEntry(out, decoded->first, !decoded->second.inDoubt.empty(), body.bytes());
      ++decoded;
    }
  }
}

void splitStates(In& in, std::vector<EncodedState>& out) {
  const uint64_t n = in.u();
  out.reserve(std::min<uint64_t>(n, 1u << 24));
  for (uint64_t i = 0; i < n; ++i) {
    EncodedState e;
    e.key = in.view();
    const uint64_t flags = in.u();
    if (flags > 1) throw std::invalid_argument("checkpoint: unknown flags of " + std::string(e.key));
    e.inDoubt = flags == 1;
    e.body = in.view();
    if (!out.empty() && !(out.back().key < e.key))
      throw std::invalid_argument("checkpoint: keys out of order at " + std::string(e.key));
    out.push_back(e);
  }
}

}  // namespace

std::string encodeCheckpoint(const ProjectionStates& states, uint64_t appliedThrough) {
  return encodeCheckpoint(states.jobs, states.clusters, {}, appliedThrough);
}

std::string encodeCheckpoint(const std::map<std::string, JobState>& jobs,
                             const std::map<std::string, JobState>& clusters,
                             const EncodedStates& untouched, uint64_t appliedThrough) {
  Out out;
  out.bytes().append(kMagic, 4);
  out.u(appliedThrough);
  encodeStates(out, jobs, untouched.jobs);
  encodeStates(out, clusters, untouched.clusters);
  return std::move(out.bytes());
}

std::string encodeCheckpointV4(const ProjectionStates& states, uint64_t appliedThrough) {
  Out out;
  out.bytes().append(kMagicV4, 4);
  out.u(appliedThrough);
  encodeStatesV4(out, states.jobs);
  encodeStatesV4(out, states.clusters);
  return std::move(out.bytes());
}

bool splitCheckpoint(std::string_view bytes, EncodedStates& states, uint64_t& appliedThrough) {
  if (bytes.substr(0, 4) != std::string_view(kMagic, 4)) return false;
  In in(bytes);
  in.skip(4);
  appliedThrough = in.u();
  splitStates(in, states.jobs);
  splitStates(in, states.clusters);
  if (!in.done()) throw std::invalid_argument("checkpoint: trailing bytes");
  return true;
}

JobState decodeState(const EncodedState& state) {
  In in(state.body);
  try {
    JobState s = decodeJob(in, true);
    decodeTail(in, s);
    return s;
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(e.what()) + " in the state of " +
                                std::string(state.key));
  }
}

void decodeCheckpoint(const std::string& bytes, ProjectionStates& states,
                      uint64_t& appliedThrough) {
  EncodedStates encoded;
  if (splitCheckpoint(bytes, encoded, appliedThrough)) {
    for (const auto& e : encoded.jobs) states.jobs.emplace_hint(states.jobs.end(), e.key, decodeState(e));
    for (const auto& e : encoded.clusters)
      states.clusters.emplace_hint(states.clusters.end(), e.key, decodeState(e));
    return;
  }
  if (!isBinaryCheckpoint(bytes))
    throw std::invalid_argument("checkpoint: not an RJP2/RJP3/RJP4/RJP5 projection checkpoint");
  const bool v4 = bytes.compare(0, 4, kMagicV4) == 0;
  In in(bytes);
  in.skip(4);
  appliedThrough = in.u();
  decodeStatesV4(in, states.jobs, v4);
  if (v4 || bytes.compare(0, 4, kMagicV3) == 0) decodeStatesV4(in, states.clusters, v4);
  if (!in.done()) throw std::invalid_argument("checkpoint: trailing bytes");
}

std::string inCurrentFormat(const std::string& bytes) {
  if (!isBinaryCheckpoint(bytes)) return "";
  try {
    ProjectionStates states;
    uint64_t through = 0;
    decodeCheckpoint(bytes, states, through);
    return encodeCheckpoint(states, through);
  } catch (const std::invalid_argument&) {
    return "";
  }
}

}  // namespace rayjournal::projection
