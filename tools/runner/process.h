#pragma once
/// \file
/// \brief Starting the programs the runner drives (cmake, ctest, lessons, checks): argument
/// vectors, never a shell, so nothing from a file or a flag is ever evaluated.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace runner {

/// Extra environment for a child: (name, value) pairs set on top of the runner's own.
using Environment = std::vector<std::pair<std::string, std::string>>;

/// Runs `argv` (argv[0] looked up on PATH) and waits. `output`: a file that receives stdout and
/// stderr, or empty to share the runner's. Returns the exit status, 128 + N for signal N, 127
/// when it could not start.
int run_process(const std::vector<std::string>& argv, const Environment& env = {}, const std::string& output = "");

/// Runs `argv` with its output discarded and waits; the exit status as run_process gives it.
int run_quietly(const std::vector<std::string>& argv, const Environment& env = {});

/// What one run of a program cost.
struct RunCost {
  int status = 0;               ///< exit status, as run_process gives it
  double seconds = 0;           ///< wall time from start to exit
  std::int64_t peak_bytes = 0;  ///< its own peak resident memory (not that of the runner's other children)
};

/// Runs `argv` with its output discarded and measures it.
RunCost measure_process(const std::vector<std::string>& argv);

/// Runs `argv` and returns its exit status and stdout (stderr is discarded).
std::pair<int, std::string> capture_process(const std::vector<std::string>& argv, const Environment& env = {});

/// Replaces the runner with `argv` (a lesson, the trace tool, ctest): signals and the exit status
/// are the program's own. Throws std::runtime_error when it cannot start.
[[noreturn]] void exec_process(const std::vector<std::string>& argv, const Environment& env = {});

/// True when `name` is an executable on PATH.
bool on_path(const std::string& name);

}  // namespace runner
