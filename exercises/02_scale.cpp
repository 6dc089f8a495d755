// Exercise 02 — see 02_scale.h for the contract, `./workbook hint 2` for a hint.
// Until you write them, the functions below throw "not implemented yet" and the checks fail.
#include "02_scale.h"

#include "workbook/not_implemented.h"

namespace exercises {

double mean_step_us(const workbook::Profile& profile) {
  // TODO: the ProfilerStep#N regions are profile.find_prefix("ProfilerStep#"); average their
  // total_ns, in microseconds; no regions is an error (std::invalid_argument).
  (void)profile;
  throw workbook::NotImplemented("exercise 02: mean_step_us (exercises/02_scale.cpp)");
}

StepBreakdown breakdown(const workbook::Profile& profile, double fixed_cost_us) {
  // TODO: step_us from mean_step_us; ops_self_us from workbook::self_ns_of per step; compute
  // from the kernels (workbook::interval_union_ns) when there are any, else step - fixed cost;
  // then overhead and busy fraction.
  (void)profile, (void)fixed_cost_us;
  throw workbook::NotImplemented("exercise 02: breakdown (exercises/02_scale.cpp)");
}

Regime classify(const StepBreakdown& step) {
  // TODO: compute-bound when at least half of the step is arithmetic.
  (void)step;
  throw workbook::NotImplemented("exercise 02: classify (exercises/02_scale.cpp)");
}

double step_flops(std::int64_t n) {
  // TODO: 2 n^3 for the matmul plus n^2 for the bias.
  (void)n;
  throw workbook::NotImplemented("exercise 02: step_flops (exercises/02_scale.cpp)");
}

double achieved_gflops(std::int64_t n, const StepBreakdown& step) {
  // TODO: step_flops(n) in step_us microseconds, as GFLOP/s.
  (void)n, (void)step;
  throw workbook::NotImplemented("exercise 02: achieved_gflops (exercises/02_scale.cpp)");
}

}  // namespace exercises
