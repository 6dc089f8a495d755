#pragma once
/// \file
/// \brief Writing files so that a reader never sees half of one.

#include <filesystem>
#include <string_view>

namespace workbook {

/// Writes `contents` to a temporary file beside `path`, then renames it over `path`, so an
/// interrupted run leaves either the old file or the new one. Creates missing parent folders.
/// Throws std::runtime_error naming the path when any step fails (and removes the temporary).
void write_file_atomically(const std::filesystem::path& path, std::string_view contents);

/// Makes SIGINT and SIGTERM remove the temporary file of a write in progress before the process
/// ends, so that Ctrl-C never leaves a partial file behind. Lessons call it at start-up.
void remove_partial_files_on_interrupt();

/// Reads a whole file. Throws std::runtime_error naming the path when it cannot.
std::string read_file(const std::filesystem::path& path);

}  // namespace workbook
