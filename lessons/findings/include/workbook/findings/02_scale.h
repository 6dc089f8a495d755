#pragma once
/// \file
/// \brief Lesson 02's run-dependent sentences about its size sweep. Timings vary from run to run,
/// so these are narration whose words follow this run's numbers, never a claim that could fail it;
/// the two findings answer the lesson's prediction questions.

#include <cstdint>
#include <string>
#include <vector>

#include "workbook/findings/finding.h"

namespace workbook::findings02 {

/// One size of the sweep as the lesson measured it.
struct SizePoint {
  std::int64_t n = 0;      ///< matrix size
  double step_us = 0;      ///< one step's time
  double ops_self_us = 0;  ///< aten::mm's and aten::add's self time in it
  double busy = 0;         ///< busy fraction: the part that grows with the work, over the step
};

/// At the smallest size: how much of the step the ops' self time was, beside what its arithmetic
/// needs at `ceiling_gflops`. Throws std::invalid_argument on an empty sweep.
std::string small_size_self_share(const std::vector<SizePoint>& sweep, double ceiling_gflops);

/// How the busy fraction moved from the smallest size to the largest, and where (if anywhere) it
/// reached one half, said as this run shows it ("climbs" only when no size's busy fraction fell
/// more than 0.05 below the size before it).
std::string busy_fraction_trend(const std::vector<SizePoint>& sweep);

/// The sizes whose step took longer than a larger size's (by more than 5 %), or whose GEMM rate
/// (2n^3 flops per step) fell below half a smaller size's (more flops per step amortise the fixed
/// cost, so the rate only rises until the ceiling): something other than their work slowed them,
/// so their rows and the crossover are not this machine's. "" when none.
std::string disturbed_sizes(const std::vector<SizePoint>& sweep);

/// This run's first compute-bound size beside the articles' A100, which was overhead-bound at 64
/// and compute-bound at 4096 (the two sizes they report).
std::string crossover_against_the_a100(const std::vector<SizePoint>& sweep);

/// The sweep's smallest size was overhead-bound: its busy fraction is below one half. Throws
/// std::invalid_argument on an empty sweep.
Finding smallest_size_overhead_bound(const std::vector<SizePoint>& sweep);

/// The first size (in sweep order) whose busy fraction is at least one half; 0 when none is.
std::int64_t first_compute_bound_size(const std::vector<SizePoint>& sweep);

}  // namespace workbook::findings02
