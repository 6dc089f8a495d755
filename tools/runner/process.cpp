#include "process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "usage_error.h"

namespace runner {
namespace {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

void apply(const Environment& env) {
  for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
}

int exit_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// Forks; in the child, points stdout and stderr at `fd` when fd >= 0, sets the environment and
// execs. Returns the child's pid.
pid_t spawn(const std::vector<std::string>& argv, const Environment& env, int fd) {
  if (argv.empty()) throw std::runtime_error("nothing to run");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(fmt::format("cannot start {}: {}", argv[0], std::strerror(errno)));
  if (pid == 0) {
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
    apply(env);
    auto args = c_argv(argv);
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "workbook: cannot start %s: %s\n", argv[0].c_str(), std::strerror(errno));
    std::_Exit(127);
  }
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 1;
  return exit_status(status);
}

// Opens a child's output file: a regular file (emptied) or a new one, never through a symlink and
// never blocking on a pipe (O_NONBLOCK: a FIFO without a reader fails at once). The file sits in
// the learner's state folder, so a problem with it is bad input: one line, exit 2.
int open_output(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0)
    throw UsageError(
        fmt::format("cannot write {}: {}", path, errno == ELOOP ? "it is a symlink" : std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw UsageError(fmt::format("cannot write {}: not a regular file", path));
  }
  if (::ftruncate(fd, 0) != 0 || ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
    const int error = errno;
    ::close(fd);
    throw UsageError(fmt::format("cannot write {}: {}", path, std::strerror(error)));
  }
  return fd;
}

// A file descriptor, closed when it goes out of scope (also when spawning throws); -1 for none.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Starts `argv` with its stdout and stderr going to /dev/null (a device: open_output, which takes
// only regular files, refuses it).
pid_t spawn_quietly(const std::vector<std::string>& argv, const Environment& env) {
  const Descriptor null(::open("/dev/null", O_WRONLY | O_CLOEXEC));
  return spawn(argv, env, null.get());
}

}  // namespace

int run_process(const std::vector<std::string>& argv, const Environment& env, const std::string& output) {
  pid_t pid = 0;
  {
    const Descriptor fd(output.empty() ? -1 : open_output(output));
    pid = spawn(argv, env, fd.get());
  }
  return wait_for(pid);
}

int run_quietly(const std::vector<std::string>& argv, const Environment& env) {
  return wait_for(spawn_quietly(argv, env));
}

RunCost measure_process(const std::vector<std::string>& argv) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = spawn_quietly(argv, {});
  int status = 0;
  struct rusage usage {};
  // wait4: this child's own rusage (RUSAGE_CHILDREN would give the largest of every child so far).
  while (::wait4(pid, &status, 0, &usage) < 0)
    if (errno != EINTR) return {1, 0, 0};
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {exit_status(status), seconds, std::int64_t(usage.ru_maxrss) * 1024};  // ru_maxrss: KiB on Linux
}

std::pair<int, std::string> capture_process(const std::vector<std::string>& argv, const Environment& env) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("cannot create a pipe");
  // In the child the write end replaces stdout (dup2 clears O_CLOEXEC on the copy); stderr is
  // silenced.
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(fmt::format("cannot start {}", argv.at(0)));
  if (pid == 0) {
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, STDERR_FILENO);
    apply(env);
    auto args = c_argv(argv);
    ::execvp(args[0], args.data());
    std::_Exit(127);
  }
  ::close(pipe_fds[1]);
  std::string out;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n > 0)
      out.append(buffer, std::size_t(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  ::close(pipe_fds[0]);
  return {wait_for(pid), out};
}

void exec_process(const std::vector<std::string>& argv, const Environment& env) {
  if (argv.empty()) throw std::runtime_error("nothing to run");
  std::fflush(stdout);
  apply(env);
  auto args = c_argv(argv);
  ::execvp(args[0], args.data());
  throw std::runtime_error(fmt::format("cannot start {}: {}", argv[0], std::strerror(errno)));
}

bool on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::string dirs = path;
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::filesystem::path candidate = std::filesystem::path(dirs.substr(start, end - start)) / name;
    if (::access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate)) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace runner
