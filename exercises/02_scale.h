#pragma once
/// \file
/// \brief Exercise 02: where does a step's time go — overhead or arithmetic?

#include <cstdint>

#include "workbook/profile.h"

namespace exercises {

//! [contract]
/// Where the time of the recorded steps of a matmul + bias profile goes, per step on average.
struct StepBreakdown {
  double step_us = 0;        ///< mean total time of the ProfilerStep#N regions
  double ops_self_us = 0;    ///< mean self time of aten::mm + aten::add: what the profile attributes to them
  double compute_us = 0;     ///< GPU: kernel busy time per step; CPU: the work beyond the fixed cost
                             ///< (the arithmetic and anything else that grows with n, memory traffic included)
  double overhead_us = 0;    ///< step_us - compute_us: dispatch, allocation, the profiler
  double busy_fraction = 0;  ///< compute_us / step_us
};

/// The two regimes of the articles.
enum class Regime { overhead_bound, compute_bound };

/// Mean total time of the profile's ProfilerStep#N regions, in microseconds. Throws
/// std::invalid_argument when the profile has none.
double mean_step_us(const workbook::Profile& profile);

/// Breaks down a profile whose recorded steps each ran `add(matmul(x, w), b)`.
///
/// "Compute" is the time the arithmetic takes. On a GPU the profile shows it directly: the
/// union of the kernels' intervals, divided by the number of steps. On a CPU no event isolates
/// the BLAS call: aten::mm's self time also holds the dispatcher, the output's allocation and the
/// call's set-up. So on a CPU (no kernel events) a step is modelled as a fixed cost plus the
/// arithmetic: compute = step - `fixed_cost_us` (never below 0) — the work beyond the fixed cost,
/// which counts memory-bound work too, not only flops — where the fixed cost is the
/// mean step of a tiny size whose arithmetic is negligible (the lesson uses n = 16).
StepBreakdown breakdown(const workbook::Profile& profile, double fixed_cost_us);

/// compute_bound when at least half of a step is arithmetic (busy_fraction >= 0.5).
Regime classify(const StepBreakdown& step);

/// Flops of one step at size n: 2n^3 (matmul) + n^2 (bias).
double step_flops(std::int64_t n);

/// Achieved GFLOP/s of one step at size n: step_flops(n) over step_us.
double achieved_gflops(std::int64_t n, const StepBreakdown& step);
//! [contract]

}  // namespace exercises
