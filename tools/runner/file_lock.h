#pragma once
/// \file
/// \brief An advisory lock on a file (flock) for the lifetime of an object: the runner's state and
/// its build tree are shared by every runner started at once.

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "usage_error.h"

namespace runner {

/// Holds `path` (created if missing) locked with `mode`: LOCK_EX to change what it guards,
/// LOCK_SH to use it while nobody changes it. A lock that cannot be taken (the path is a folder, a
/// symlink, unwritable) is a UsageError: going on unlocked would let two runners mix their writes.
class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& path, int mode = LOCK_EX)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644)) {
    if (fd_ < 0) throw UsageError("cannot lock " + path.string() + ": " + std::strerror(errno) + " (move it away)");
    ::flock(fd_, mode);
  }
  ~FileLock() { ::close(fd_); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace runner
