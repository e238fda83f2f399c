// Errors the journal reports. Every message names the journal directory or record involved.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace rayjournal::wal {

// Opening, locking, I/O and usage errors.
class JournalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The disk holding the journal is full (ENOSPC). Nothing was written; the journal resumes by
// itself once space returns (see Journal::unwritable).
class JournalFullError : public JournalError {
 public:
  using JournalError::JournalError;
};

// Another process holds the journal directory's lock (a second operator on the same volume: a
// forced Pod deletion starts the replacement before the old container has stopped). Nothing was
// read or written; opening again once that process is gone succeeds.
class JournalLockedError : public JournalError {
 public:
  using JournalError::JournalError;
};

// A record that cannot be trusted: checksum mismatch, truncated value, undecodable body, or a
// storage-level corruption. seq is the first affected record (0 when storage cannot tell).
class CorruptionError : public JournalError {
 public:
  CorruptionError(uint64_t seq, const std::string& cause)
      : JournalError(seq ? "journal record seq " + std::to_string(seq) + " is corrupt: " + cause
                         : "journal is corrupt: " + cause),
        seq_(seq),
        cause_(cause) {}
  uint64_t seq() const { return seq_; }
  const std::string& cause() const { return cause_; }

 private:
  uint64_t seq_;
  std::string cause_;
};

}  // namespace rayjournal::wal
