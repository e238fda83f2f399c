// A fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) prints which one and the faulting
// thread's stack to stderr before the process dies of it as it would have (same signal, so a
// supervisor sees the same exit status and a core is still dumped where enabled). Without it, an
// operator that crashed in CI leaves only "exited with -11" behind.
// The frames are printed as `binary(+offset)`: `addr2line -Cfe <binary> <offset>` names them.
// On the main thread the handler runs on a stack of its own, so its stack overflow is reported
// too. Not installed in sanitizer builds, whose own reports are better.
#pragma once

namespace rayjournal::adapters {

// Installs the handlers for the whole process. Call once, early in main(); not thread-safe.
void installCrashReport();
// Whether installCrashReport() installs anything in this build.
bool crashReportAvailable();

}  // namespace rayjournal::adapters
