// A projection folds journal records into state: state = apply(state, record). Deterministic:
// the same records in the same order give byte-identical checkpoints.
#pragma once

#include <string>

#include "wal/Record.h"

namespace rayjournal::projection {

class Projection {
 public:
  virtual ~Projection() = default;
  virtual void apply(const wal::Record& record) = 0;
  virtual std::string checkpoint() const = 0;
  // Replaces the state; throws std::invalid_argument on bytes that are not a checkpoint. The
  // bytes are handed over: a projection may keep them and decode from them later.
  virtual void restore(std::string bytes) = 0;
};

}  // namespace rayjournal::projection
