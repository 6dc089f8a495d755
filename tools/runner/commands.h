#pragma once
/// \file
/// \brief The runner's commands, one function each; `main` parses the command line and calls them.
/// Each returns the exit status (0 done, 1 a check or build failed); bad input throws UsageError.

#include <string>
#include <vector>

#include "arguments.h"
#include "context.h"

namespace runner {

// Exercises (exercise_commands.cpp).
int check_exercise(const Context& c, const Arguments& a);
int watch_exercise(const Context& c, const Arguments& a);
int show_hint(const Context& c, const Arguments& a);
int show_solution(const Context& c, const Arguments& a);
int reset_exercise(const Context& c, const Arguments& a);
int list_lessons(const Context& c, const Arguments& a);

// Programs (program_commands.cpp).
int run_lesson(const Context& c, const Arguments& a);
int run_suite(const Context& c, const Arguments& a);
int run_doctor(const Context& c, const Arguments& a);
int run_bench(const Context& c, const Arguments& a);
int run_trace(const Context& c, const Arguments& a);
/// `report FILE... -o OUT.html`: builds and execs workbook_report.
int run_report(const Context& c, const Arguments& a);
int build_docs(const Context& c, const Arguments& a);
int run_fuzzer(const Context& c, const Arguments& a);

/// `dev check` (dev_check.cpp): the manifest against the tree.
int dev_check(const Context& c, const Arguments& a);

/// Runs `verb` with `a` inside the Debian 13 root (LibTorch 2.6 with Kineto); never returns.
[[noreturn]] void in_libtorch2(const Context& c, const std::string& verb, const Arguments& a);

}  // namespace runner
