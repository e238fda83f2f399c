// `rayjournal-replay completion bash|zsh`: the shell completion scripts (commands, their flags,
// -o values, and NAMESPACE/NAME of the RayJobs the journal knows, from `state`).
#pragma once

#include <ostream>
#include <string>

namespace rayjournal::replay {

// Prints the script for shell ("bash" or "zsh"); returns the exit code (2: unknown shell).
int printCompletion(const std::string& shell, std::ostream& out);

}  // namespace rayjournal::replay
