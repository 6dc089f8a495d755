#pragma once
/// \file
/// \brief Building what a command needs with CMake, one runner at a time, and showing a failed
/// build as a person reads it: the compiler's first errors, the learner's own file first.

#include <filesystem>
#include <string>
#include <vector>

#include "process.h"

namespace runner {

/// The first errors of a build log, trimmed to what a person reads: diagnostics about one of
/// `own_files` (paths relative to the project root, such as "exercises/05_mlp.cpp") first, each
/// with the lines the compiler printed under it, then others; at most `max_lines` lines. Linker
/// errors and logs without a compiler diagnostic give their error lines, else the log's tail.
std::string build_error_excerpt(const std::string& log, const std::vector<std::string>& own_files,
                                std::size_t max_lines = 30);

/// The build tree the bootstrap configured (build/ or WORKBOOK_BUILD_DIR).
class Builder {
 public:
  Builder(std::filesystem::path root, std::filesystem::path build_dir, std::filesystem::path log);

  /// Builds `targets` quietly into the log. On failure prints the excerpt (the learner's
  /// `own_files` first) and where the whole log is, and returns false: the caller stops there,
  /// so an older binary is never run in place of a source that does not compile.
  /// `show_errors` false: the caller can do without the target (the BLAS probe), so say nothing.
  bool build(const std::vector<std::string>& targets, const std::vector<std::string>& own_files = {},
             bool show_errors = true) const;
  /// Runs a program the build made, holding the build lock shared: no other runner relinks it
  /// while it runs.
  int run_built(const std::vector<std::string>& argv, const Environment& env = {}) const;
  /// Builds everything, its output shown as it comes (the suite).
  bool build_all() const;

  /// A program the build made: build_dir / relative.
  std::filesystem::path program(const std::string& relative) const { return build_dir_ / relative; }
  const std::filesystem::path& dir() const { return build_dir_; }
  const std::filesystem::path& root() const { return root_; }
  /// Parallel jobs for a build or a test run: one per core.
  static std::string jobs();
  /// True when the configured tree has this target (lesson 07's GPU checks need CUDA).
  bool has_target(const std::string& target) const;

 private:
  std::vector<std::string> cmake_build(const std::vector<std::string>& targets) const;
  std::filesystem::path root_, build_dir_, log_;
};

}  // namespace runner
