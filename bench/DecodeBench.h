// `rayjournal-bench decode`: the decoding choice of lean (#36), measured. A recorded watch stream
// (one event per line, as the API server sends it) is decoded into WatchHeads three ways:
// today's path (an nlohmann document per event, then read), nlohmann's SAX interface (no
// document), and simdjson's On-Demand API. Each must give the DOM's heads, event by event;
// a decoder that disagrees is reported, and its time is not a result.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rayjournal::bench {

struct DecodeOptions {
  std::vector<std::string> streams;  // files of watch events, one per line
  int repeat = 20;                   // passes over the events per decoder (the best is kept)
};

nlohmann::json runDecode(const DecodeOptions& options);

}  // namespace rayjournal::bench
