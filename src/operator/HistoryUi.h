// The history UI: read-only pages and the HTTP+JSON API under them (docs/history-ui.md), served
// from a journal by the operator (--ui-bind-address) and by `rayjournal-replay serve`.
//
//   GET /                                      the list of RayJobs (page)
//   GET /pending                               what is pending and the last errors (page)
//   GET /rayjobs/NS/NAME                       one RayJob's timeline, updated live (page)
//   GET /rayclusters/NS/NAME                   one of its RayClusters' timeline (page)
//   GET /api/v1/rayjobs?namespace=&status=&reason=&deleted=true&since=SEQ
//   GET /api/v1/pending
//   GET /api/v1/rayjobs/NS/NAME/records?after=SEQ&limit=N
//   GET /api/v1/rayclusters/NS/NAME/records?after=SEQ&limit=N
//
// Memory is bounded whatever the journal's size: the list is a RunIndex (a few hundred bytes per
// RayJob run) brought up to date with the records appended since the last request, and a
// RayJob's records come a page at a time through its back-pointer chain. What is served is what
// the records hold: names, reasons and status fields (Intent::journalBody keeps no Secret data
// and no env value). Not thread-safe: the server calls answer() on its one thread.
#pragma once

#include <string>

#include "operator/StatusServer.h"
#include "projection/RunIndex.h"
#include "wal/Journal.h"

namespace rayjournal::operator_ {

// Where the operator serves the UI: --ui-bind-address, "" for none.
struct HistoryUiAddress {
  std::string address = "127.0.0.1:8090";
  bool given = false;  // on the command line (a bind failure is then fatal)
};

class HistoryUi {
 public:
  // The journal outlives this; a following read-only journal is refreshed on each request.
  explicit HistoryUi(wal::Journal& journal) : journal_(journal) {}
  HttpAnswer answer(const std::string& target);

  static constexpr size_t kDefaultPage = 500;
  static constexpr size_t kMaxPage = 5000;

 private:
  void catchUp();
  HttpAnswer runs(const std::string& query, bool pendingOnly);
  HttpAnswer records(const std::string& kind, const std::string& ns, const std::string& name,
                     const std::string& query);

  wal::Journal& journal_;
  projection::RunIndex index_;
};

}  // namespace rayjournal::operator_
