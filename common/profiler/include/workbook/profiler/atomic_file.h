#pragma once
/// \file
/// \brief Writing files so that a reader never sees half of one, and never replacing what is not
/// a file (a device, a pipe, a symlink, a folder).

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace workbook {

/// An output path that exists and is not a regular file: writing there would replace a device,
/// a pipe, a folder or a symlink with a plain file, so nothing is written. Bad input (exit 2).
class UnsafeTarget : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Writes `contents` to a temporary file beside `path` (created exclusively, under a name no one
/// can plant in advance), then renames it over `path`, so an interrupted run leaves either the old
/// file or the new one (SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE remove the temporary). Creates missing parent folders. Throws UnsafeTarget when `path` exists and is not
/// a regular file, std::runtime_error naming the path when any step fails (and removes the
/// temporary).
void write_file_atomically(const std::filesystem::path& path, std::string_view contents);

/// Files replaced as a set: `stage` writes each to a temporary beside its target, `commit` renames
/// them all; a set that is not committed (an error, Ctrl-C) removes its temporaries and leaves
/// every old file as it was, so a reader never sees new and old files mixed.
class FileSet {
 public:
  FileSet() = default;
  FileSet(const FileSet&) = delete;
  FileSet& operator=(const FileSet&) = delete;
  /// Removes the temporaries of a set that was not committed.
  ~FileSet();
  /// Writes `contents` to a temporary beside `path` (checked like write_file_atomically).
  void stage(const std::filesystem::path& path, std::string_view contents);
  /// Renames every staged file over its target.
  void commit();

 private:
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> staged_;  // temporary, target
  std::vector<std::shared_ptr<void>> guards_;  // each temporary's registration with the interrupt handler
};

/// Makes SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE remove the temporary files of writes in progress before the process
/// ends, so that Ctrl-C never leaves a partial file behind. Writes install it themselves where the
/// signals still have their default action; lessons call it at start-up.
void remove_partial_files_on_interrupt();

/// Reads a whole file. Throws std::runtime_error naming the path when it cannot.
std::string read_file(const std::filesystem::path& path);

}  // namespace workbook
