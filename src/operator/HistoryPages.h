// The history UI's pages: self-contained HTML with a little plain JavaScript, built into the
// binary (no framework, nothing fetched from the network). Each page reads only the JSON API
// (HistoryUi.h) and polls it, so it follows the operator live and reconnects after a restart.
#pragma once

#include <string>

namespace rayjournal::operator_ {

std::string listPage();
std::string pendingPage();
std::string rayJobPage();

}  // namespace rayjournal::operator_
