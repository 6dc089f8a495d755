#pragma once
/// \file
/// \brief An advisory lock on a file (flock) for the lifetime of an object: the runner's state and
/// its build tree are shared by every runner started at once.

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>

namespace runner {

/// Holds `path` (created if missing) locked with `mode`: LOCK_EX to change what it guards,
/// LOCK_SH to use it while nobody changes it.
class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& path, int mode = LOCK_EX)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) ::flock(fd_, mode);
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace runner
