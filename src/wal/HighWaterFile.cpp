#include "wal/HighWaterFile.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "wal/FileNames.h"
#include "wal/JournalError.h"

namespace rayjournal::wal {
namespace {

[[noreturn]] void failWith(const std::string& file, const std::string& what, int err) {
  if (err == ENOSPC)
    throw JournalFullError("journal high-water file " + file + ": " + what + ": disk full");
  throw JournalError("journal high-water file " + file + ": " + what + ": " + std::strerror(err));
}

void writeAll(int fd, const std::string& bytes, const std::string& file) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      failWith(file, "write failed", err);
    }
    done += static_cast<size_t>(n);
  }
}

}  // namespace

void syncDirectory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) failWith(dir, "cannot open directory", errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) failWith(dir, "cannot sync directory", err);
}

std::optional<uint64_t> readHighWaterFile(const std::string& dir) {
  std::string file = dir + "/" + kHighWaterFile;
  std::ifstream in(file);
  if (!in) return std::nullopt;
  std::string label, number, rest;
  in >> label >> number;
  bool extra = static_cast<bool>(in >> rest);
  auto seq = parseDecimal(number);
  if (label != "acknowledged_through" || !seq || extra)
    throw CorruptionError(0, "journal high-water file " + file +
                                 " is not 'acknowledged_through <seq>'; remove it only if the "
                                 "journal is known to be complete");
  return *seq;
}

void writeHighWaterFile(const std::string& dir, uint64_t seq) {
  std::string file = dir + "/" + kHighWaterFile, tmp = file + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) failWith(tmp, "cannot create", errno);
  writeAll(fd, "acknowledged_through " + std::to_string(seq) + "\n", tmp);
  if (::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    failWith(tmp, "fsync failed", err);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), file.c_str()) != 0) failWith(file, "rename failed", errno);
  syncDirectory(dir);
}

}  // namespace rayjournal::wal
