#include "workbook/atomic_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace workbook {

void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.has_parent_path()) {
    fs::create_directories(path.parent_path(), ec);
    if (ec) throw std::runtime_error(fmt::format("cannot create folder {}: {}", path.parent_path().string(), ec.message()));
  }
  const fs::path temp = path.string() + ".tmp." + std::to_string(::getpid());
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
