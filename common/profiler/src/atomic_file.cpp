#include "workbook/profiler/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace workbook {
namespace {

namespace fs = std::filesystem;

// The temporary files being written, for the signal handler (which may only call
// async-signal-safe functions: it reads these buffers and calls unlink). A FileSet holds up to
// this many at once.
constexpr std::size_t kSlots = 16;
std::array<std::array<char, 4096>, kSlots> in_flight;
std::array<volatile std::sig_atomic_t, kSlots> in_flight_set{};

// A signal is delivered to any thread that does not block it (LibTorch runs several), so the
// handler may run while another thread creates a temporary or renames a set. This lock makes
// each of those steps whole to the handler: the handler takes it and never gives it back (the
// process ends), and a thread takes it only with the interrupt signals blocked in that thread, so
// the handler never waits for its own thread. Lock-free, so usable in a handler.
std::atomic_flag handler_lock = ATOMIC_FLAG_INIT;

void spin_lock() {
  while (handler_lock.test_and_set(std::memory_order_acquire)) ::sched_yield();
}
void spin_unlock() { handler_lock.clear(std::memory_order_release); }

constexpr std::array<int, 5> kInterrupts = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};

extern "C" void remove_in_flight_and_die(int signal) {
  spin_lock();  // kept: no thread creates or renames a temporary from here on
  for (std::size_t k = 0; k < kSlots; ++k)
    if (in_flight_set[k]) ::unlink(in_flight[k].data());
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

// Installs the handler once, where a signal still has its default action (a program that
// handles SIGINT itself keeps its handler).
void install_cleanup_once() {
  static const bool installed = [] {
    for (int signal : kInterrupts) {
      struct sigaction current {};
      if (::sigaction(signal, nullptr, &current) == 0 && current.sa_handler == SIG_DFL)
        std::signal(signal, remove_in_flight_and_die);
    }
    return true;
  }();
  (void)installed;
}

// Holds the interrupt signals back in this thread and takes the handler's lock: what runs inside
// is seen by the handler, on any thread, either not at all or whole. A process already being
// ended by a signal waits in the constructor for its end.
class Unsignalled {
 public:
  Unsignalled() {
    sigset_t interrupts;
    sigemptyset(&interrupts);
    for (int signal : kInterrupts) sigaddset(&interrupts, signal);
    pthread_sigmask(SIG_BLOCK, &interrupts, &before_);
    spin_lock();
  }
  ~Unsignalled() {
    spin_unlock();
    pthread_sigmask(SIG_SETMASK, &before_, nullptr);
  }
  Unsignalled(const Unsignalled&) = delete;
  Unsignalled& operator=(const Unsignalled&) = delete;

 private:
  sigset_t before_{};
};

// Registers a temporary path with the handler while it exists (constructed inside Unsignalled,
// with the file's creation).
class InFlight {
 public:
  explicit InFlight(const std::string& path) {
    if (path.size() >= in_flight[0].size()) return;
    for (std::size_t k = 0; k < kSlots; ++k) {
      if (in_flight_set[k]) continue;
      std::memcpy(in_flight[k].data(), path.c_str(), path.size() + 1);
      in_flight_set[k] = 1;
      slot_ = k;
      return;
    }
  }
  ~InFlight() {
    if (slot_ < kSlots) in_flight_set[slot_] = 0;
  }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  std::size_t slot_ = kSlots;
};

// Refuses a target that exists and is not a regular file, or is read-only (no write bit, or not
// writable by this user: a rename would replace it all the same, even as root); refuses a path
// with a name too long for the file system before creating anything; creates missing parent
// folders.
void check_target(const fs::path& path) {
  for (const fs::path& part : path)
    if (part.native().size() > NAME_MAX)
      throw std::runtime_error(
          fmt::format("cannot write {}: a name in it is longer than {} bytes", path.string(), NAME_MAX));
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(path, ec);
  if (!ec && fs::is_regular_file(status) &&
      ((status.permissions() & (fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write)) ==
           fs::perms::none ||
       ::access(path.c_str(), W_OK) != 0))
    throw UnsafeTarget(fmt::format("{} is read-only: not replaced", path.string()));
  if (!ec && fs::exists(status) && !fs::is_regular_file(status)) {
    const char* kind = fs::is_symlink(status)                                       ? "a symlink"
                       : fs::is_directory(status)                                   ? "a folder"
                       : fs::is_fifo(status)                                        ? "a pipe"
                       : fs::is_character_file(status) || fs::is_block_file(status) ? "a device"
                                                                                    : "not a regular file";
    throw UnsafeTarget(fmt::format("{} is {}: not replaced (write to a regular file's path)", path.string(), kind));
  }
  if (path.has_parent_path()) {
    fs::create_directories(path.parent_path(), ec);
    if (ec)
      throw std::runtime_error(fmt::format("cannot create folder {}: {}", path.parent_path().string(), ec.message()));
  }
}

// A new temporary file beside `path`, created exclusively with an unpredictable name (mkstemp: a
// name planted in advance, a symlink among them, is never opened), readable as a plain file would
// be (0666 less the umask). Returns its path and an open descriptor.
std::pair<fs::path, int> create_temporary_beside(const fs::path& path) {
  // The temporary's name must fit where the target's does (255 bytes): a long file name is cut.
  std::string file = path.filename().string();
  if (file.size() > 200) file.resize(200);
  std::string name = (path.parent_path() / (file + ".tmp.XXXXXX")).string();
  const int fd = ::mkstemp(name.data());
  if (fd < 0) throw std::runtime_error(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  return {fs::path(name), fd};
}

// Writes and syncs `contents` through `fd` (then closed) to `temp`; throws naming `target`.
void write_temporary(int fd, const fs::path& temp, const fs::path& target, std::string_view contents) {
  std::FILE* f = ::fdopen(fd, "wb");
  if (!f) {
    ::close(fd);
    std::error_code ec;
    fs::remove(temp, ec);
    throw std::runtime_error(fmt::format("cannot write {}: {}", target.string(), std::strerror(errno)));
  }
  bool ok = std::fwrite(contents.data(), 1, contents.size(), f) == contents.size();
  ok = (std::fflush(f) == 0) && ok;
  ok = (::fsync(::fileno(f)) == 0) && ok;
  const int saved_errno = errno;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) {
    std::error_code ec;
    fs::remove(temp, ec);
    throw std::runtime_error(fmt::format("cannot write {}: {}", target.string(), std::strerror(saved_errno)));
  }
}

}  // namespace

void remove_partial_files_on_interrupt() {
  // Asked for by a program (the lessons, at start-up): every one of these signals removes the
  // temporaries, even one the program was started with ignored (a background job's SIGINT).
  for (int signal : kInterrupts) std::signal(signal, remove_in_flight_and_die);
}

void write_file_atomically(const fs::path& path, std::string_view contents) {
  // A set of one file: the same checks, temporary, interrupt cleanup and rename.
  FileSet one;
  one.stage(path, contents);
  one.commit();
}

FileSet::~FileSet() {
  std::error_code ec;
  for (const auto& [temp, target] : staged_) fs::remove(temp, ec);
}

void FileSet::stage(const fs::path& path, std::string_view contents) {
  check_target(path);
  install_cleanup_once();
  int fd = -1;
  {
    // Created and registered as one step: a signal on any thread sees both or neither.
    const Unsignalled whole;
    const auto [temp, descriptor] = create_temporary_beside(path);
    guards_.push_back(std::make_shared<InFlight>(temp.string()));  // the handler removes it until commit
    staged_.emplace_back(temp, path);
    fd = descriptor;
  }
  write_temporary(fd, staged_.back().first, path, contents);
}

void FileSet::commit() {
  // The renames run as one step to the interrupt handler (whatever thread a signal lands on), so
  // Ctrl-C or a kill never lands between two of them (a set half old, half new); a signal held
  // back takes effect once the set is in place.
  const Unsignalled whole;
  // And under a lock on each target folder (in one order), so that two processes committing sets
  // into the same folder never interleave their renames: the last set wins whole.
  std::vector<fs::path> folders;
  for (const auto& [temp, target] : staged_) folders.push_back(fs::absolute(target).parent_path());
  std::sort(folders.begin(), folders.end());
  folders.erase(std::unique(folders.begin(), folders.end()), folders.end());
  std::vector<int> locks;
  for (const auto& folder : folders) {
    const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0 && ::flock(fd, LOCK_EX) == 0)
      locks.push_back(fd);
    else if (fd >= 0)
      ::close(fd);
  }
  std::string failure;
  for (const auto& [temp, target] : staged_) {
    if (failure.empty() && std::rename(temp.c_str(), target.c_str()) == 0) continue;
    if (failure.empty()) failure = fmt::format("cannot write {}: {}", target.string(), std::strerror(errno));
    ::unlink(temp.c_str());  // not renamed: no temporary is left behind
  }
  staged_.clear();
  guards_.clear();
  for (int fd : locks) ::close(fd);  // closing releases the lock
  if (!failure.empty()) throw std::runtime_error(failure);
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace workbook
