#pragma once
/// \file
/// \brief Exercise 01: profile matmul + bias in cycles, one trace per cycle, and measure the cold
/// start of each cycle.

#include <torch/types.h>

#include <filesystem>
#include <vector>

#include "workbook/profiler/profile.h"
#include "workbook/profiler/session.h"

namespace exercises {

//! [contract]
/// What one profiling cycle saw.
struct CycleGaps {
  std::filesystem::path trace;     ///< the cycle's chrome trace, written as the cycle ended
  int recorded_steps = 0;          ///< ProfilerStep#N regions in that trace
  double first_gap_us = 0;         ///< matmul_add start -> aten::matmul start in the cycle's first recorded step
  double median_other_gap_us = 0;  ///< the same gap, median over the cycle's other recorded steps
                                   ///< (0 when the cycle recorded one step: there are no others)
};

/// Profiles `y = add(matmul(x, w), b)`, one computation per step inside a `workbook::Region`
/// named "matmul_add", under `schedule` — which may repeat (lesson 01 used one cycle; here
/// `schedule.repeat` is 2 or more).
///
/// Each time a cycle's last recorded step ends, its profile must be written to
/// `dir`/cycle_<k>.json (k = 0, 1, ... counts this call's cycles: a file of that name left by an
/// earlier call is replaced) at that moment, the way Python's
/// `on_trace_ready=tensorboard_trace_handler(...)` does, not after the loop. Returns one
/// CycleGaps per cycle, in order, computed from that cycle's profile: does every cycle pay the
/// cold start again, or only the first?
std::vector<CycleGaps> profile_cycles(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                                      const workbook::Schedule& schedule, const std::filesystem::path& dir);
//! [contract]

}  // namespace exercises
