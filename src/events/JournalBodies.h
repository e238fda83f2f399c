// The bodies of the records the journal writes itself (the checkpoint marker, the salvage
// observation), encoded by this layer's codec: every program that opens a journal for writing
// passes its options through here.
#pragma once

#include "wal/Journal.h"

namespace rayjournal::events {

wal::JournalOptions journalOptions(wal::JournalOptions options = {});

}  // namespace rayjournal::events
