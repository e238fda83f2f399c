#include "adapters/CrashReport.h"

#include <execinfo.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

namespace rayjournal::adapters {
namespace {

// Only async-signal-safe calls below: write(2), backtrace_symbols_fd(3) (after the warm-up in
// installCrashReport() has loaded libgcc), raise(3).
void writeText(const char* text) {
  size_t left = std::strlen(text);
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= size_t(n);
  }
}

void onFatalSignal(int signal) {
  writeText("rayjournal: fatal signal ");
  writeText(sigabbrev_np(signal) ? sigabbrev_np(signal) : "?");
  writeText("; the stack of the thread it hit (addr2line -Cfe <binary> <+offset>):\n");
  void* frames[64];
  int depth = ::backtrace(frames, 64);
  ::backtrace_symbols_fd(frames, depth, STDERR_FILENO);
  // SA_RESETHAND restored the default action: the process now dies of the same signal.
  ::raise(signal);
}

}  // namespace

bool crashReportAvailable() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return false;
#else
  return true;
#endif
}

void installCrashReport() {
  if (!crashReportAvailable()) return;
  void* warmUp[1];
  ::backtrace(warmUp, 1);  // loads the unwinder now, not inside the handler
  static char alternateStack[64 * 1024];
  stack_t stack{};
  stack.ss_sp = alternateStack;
  stack.ss_size = sizeof alternateStack;
  ::sigaltstack(&stack, nullptr);
  struct sigaction action{};
  action.sa_handler = onFatalSignal;
  action.sa_flags = SA_RESETHAND | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::sigaction(signal, &action, nullptr);
}

}  // namespace rayjournal::adapters
