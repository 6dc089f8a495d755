#include "workbook/profiler/atomic_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace workbook {
namespace {

// The temporary file being written, for the signal handler (which may only call
// async-signal-safe functions: it reads this buffer and calls unlink).
char in_flight[4096];
volatile std::sig_atomic_t in_flight_set = 0;

extern "C" void remove_in_flight_and_die(int signal) {
  if (in_flight_set) ::unlink(in_flight);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

struct InFlight {
  explicit InFlight(const std::string& path) {
    if (path.size() >= sizeof(in_flight)) return;
    std::memcpy(in_flight, path.c_str(), path.size() + 1);
    in_flight_set = 1;
  }
  ~InFlight() { in_flight_set = 0; }
};

}  // namespace

void remove_partial_files_on_interrupt() {
  std::signal(SIGINT, remove_in_flight_and_die);
  std::signal(SIGTERM, remove_in_flight_and_die);
}

void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.has_parent_path()) {
    fs::create_directories(path.parent_path(), ec);
    if (ec)
      throw std::runtime_error(fmt::format("cannot create folder {}: {}", path.parent_path().string(), ec.message()));
  }
  const fs::path temp = path.string() + ".tmp." + std::to_string(::getpid());
  const InFlight guard(temp.string());
  std::FILE* f = std::fopen(temp.c_str(), "wb");
  if (!f) throw std::runtime_error(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
  bool ok = std::fwrite(contents.data(), 1, contents.size(), f) == contents.size();
  ok = (std::fflush(f) == 0) && ok;
  ok = (::fsync(::fileno(f)) == 0) && ok;
  const int saved_errno = errno;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = ok ? errno : saved_errno;
    fs::remove(temp, ec);
    throw std::runtime_error(fmt::format("cannot write {}: {}", path.string(), std::strerror(err)));
  }
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace workbook
