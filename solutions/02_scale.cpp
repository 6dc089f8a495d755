// Reference solution of exercise 02.
#include "02_scale.h"

#include <algorithm>
#include <stdexcept>

namespace exercises {

double mean_step_us(const workbook::Profile& profile) {
  const auto steps = profile.find_prefix("ProfilerStep#");
  if (steps.empty()) throw std::invalid_argument("the profile has no ProfilerStep#N region");
  double total_ns = 0;
  for (auto s : steps) total_ns += double(profile.total_ns(s));
  return total_ns / 1e3 / double(steps.size());
}

StepBreakdown breakdown(const workbook::Profile& profile, double fixed_cost_us) {
  const double steps = double(profile.find_prefix("ProfilerStep#").size());
  const auto kernels = profile.of_category(workbook::Category::kernel);
  StepBreakdown b;
  b.step_us = mean_step_us(profile);
  b.ops_self_us = double(workbook::self_ns_of(profile, {"aten::mm", "aten::add"})) / 1e3 / steps;
  b.compute_us = kernels.empty() ? std::max(0.0, b.step_us - fixed_cost_us)
                                 : double(workbook::interval_union_ns(profile, kernels)) / 1e3 / steps;
  b.overhead_us = b.step_us - b.compute_us;
  b.busy_fraction = b.step_us > 0 ? b.compute_us / b.step_us : 0.0;
  return b;
}

Regime classify(const StepBreakdown& step) {
  return step.busy_fraction >= 0.5 ? Regime::compute_bound : Regime::overhead_bound;
}

double step_flops(std::int64_t n) {
  const double d = double(n);
  return 2.0 * d * d * d + d * d;
}

double achieved_gflops(std::int64_t n, const StepBreakdown& step) {
  return step.step_us > 0 ? step_flops(n) / (step.step_us * 1e3) : 0.0;
}

}  // namespace exercises
