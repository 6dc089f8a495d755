#pragma once
/// \file
/// \brief Starting the programs the runner drives (cmake, ctest, lessons, checks): argument
/// vectors, never a shell, so nothing from a file or a flag is ever evaluated.

#include <string>
#include <utility>
#include <vector>

namespace runner {

/// Extra environment for a child: (name, value) pairs set on top of the runner's own.
using Environment = std::vector<std::pair<std::string, std::string>>;

/// The environment for a program that imports whole traces (trace, report): glibc's malloc asks
/// for transparent huge pages (`GLIBC_TUNABLES` gains `glibc.malloc.hugetlb=1`; glibc < 2.35
/// ignores it). A 100 MB trace becomes ~240 MB of small records, and page faults were 28% of the
/// import's time on the CI machine; with huge pages `trace` took 0.57x the time. `current` is the
/// variable's value now (nullptr when unset): other tunables are kept, a hugetlb setting wins.
Environment huge_pages_environment(const char* current);

/// Runs `argv` (argv[0] looked up on PATH) and waits. `output`: a file that receives stdout and
/// stderr, or empty to share the runner's. Returns the exit status, 128 + N for signal N, 127
/// when it could not start.
int run_process(const std::vector<std::string>& argv, const Environment& env = {}, const std::string& output = "");

/// Runs `argv` and returns its exit status and stdout (stderr is discarded).
std::pair<int, std::string> capture_process(const std::vector<std::string>& argv, const Environment& env = {});

/// Replaces the runner with `argv` (a lesson, the trace tool, ctest): signals and the exit status
/// are the program's own. Throws std::runtime_error when it cannot start.
[[noreturn]] void exec_process(const std::vector<std::string>& argv, const Environment& env = {});

/// True when `name` is an executable on PATH.
bool on_path(const std::string& name);

}  // namespace runner
