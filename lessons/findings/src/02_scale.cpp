#include "workbook/findings/02_scale.h"

#include <fmt/format.h>

#include <stdexcept>

namespace workbook::findings02 {
namespace {

const SizePoint* first_compute_bound(const std::vector<SizePoint>& sweep) {
  for (const SizePoint& p : sweep)
    if (p.busy >= 0.5) return &p;
  return nullptr;
}

void require_points(const std::vector<SizePoint>& sweep) {
  if (sweep.empty()) throw std::invalid_argument("the sweep has no sizes");
}

}  // namespace

std::string small_size_self_share(const std::vector<SizePoint>& sweep, double ceiling_gflops) {
  require_points(sweep);
  const SizePoint& p = sweep.front();
  const double n = double(p.n), arithmetic_us = ceiling_gflops > 0 ? 2 * n * n * n / (ceiling_gflops * 1e3) : 0;
  return fmt::format(
      "at n = {} the 'mm+add self' column is {:.0f}% of the step ({:.2f} of {:.2f} us), while the GEMM's arithmetic "
      "needs {:.3f} us at the ceiling",
      p.n, p.step_us > 0 ? 100 * p.ops_self_us / p.step_us : 0.0, p.ops_self_us, p.step_us, arithmetic_us);
}

std::string busy_fraction_trend(const std::vector<SizePoint>& sweep) {
  require_points(sweep);
  const SizePoint &first = sweep.front(), &last = sweep.back();
  const SizePoint* crossover = first_compute_bound(sweep);
  // The lesson takes the smallest size's step as the fixed cost: its busy fraction is 0 by
  // definition, and the sentence says so rather than presenting it as a measurement.
  const std::string by_definition = first.busy == 0 ? " (zero by definition: that step is the fixed cost)" : "";
  const std::string ends =
      fmt::format("{:.2f} at n = {}{} to {:.2f} at n = {}", first.busy, first.n, by_definition, last.busy, last.n);
  if (sweep.size() < 2 || last.busy <= first.busy)
    return fmt::format("here the busy fraction did not climb: from {}", ends);
  for (std::size_t k = 1; k < sweep.size(); ++k)
    if (sweep[k].busy < sweep[k - 1].busy - 0.05)
      return fmt::format(
          "here the busy fraction rose from {} but not steadily: it fell from {:.2f} at n = {} to {:.2f} "
          "at n = {}",
          ends, sweep[k - 1].busy, sweep[k - 1].n, sweep[k].busy, sweep[k].n);
  return fmt::format("here the busy fraction climbs from {}{}", ends,
                     crossover ? fmt::format(", compute-bound from n = {}", crossover->n)
                               : std::string(", without reaching one half in this range"));
}

std::string disturbed_sizes(const std::vector<SizePoint>& sweep) {
  std::string slow;
  for (std::size_t k = 0; k < sweep.size(); ++k)
    for (std::size_t later = k + 1; later < sweep.size(); ++later)
      if (sweep[k].step_us > 1.05 * sweep[later].step_us) {
        slow += fmt::format("{}n = {} took longer than n = {} ({:.1f} against {:.1f} us)", slow.empty() ? "" : "; ",
                            sweep[k].n, sweep[later].n, sweep[k].step_us, sweep[later].step_us);
        break;
      }
  // GFLOP/s of one step's GEMM: 2n^3 flops in step_us.
  auto rate = [](const SizePoint& p) { return 2.0 * double(p.n) * double(p.n) * double(p.n) / p.step_us / 1e3; };
  for (std::size_t k = 1; k < sweep.size(); ++k)
    for (std::size_t earlier = 0; earlier < k; ++earlier)
      if (sweep[k].step_us > 0 && sweep[earlier].step_us > 0 && rate(sweep[k]) < 0.5 * rate(sweep[earlier])) {
        const double n_ratio = double(sweep[k].n) / double(sweep[earlier].n);
        slow += fmt::format(
            "{}n = {} ran at {:.2f} GFLOP/s against {:.2f} at n = {} ({:.0f}x the flops took {:.0f}x "
            "the time)",
            slow.empty() ? "" : "; ", sweep[k].n, rate(sweep[k]), rate(sweep[earlier]), sweep[earlier].n,
            n_ratio * n_ratio * n_ratio, sweep[k].step_us / sweep[earlier].step_us);
        break;
      }
  if (slow.empty()) return slow;
  return slow +
         ": something other than the work slowed it (another process, a cold cache), so its row, and the "
         "crossover computed from it, may not be this machine's. Rerun on a quiet machine";
}

std::string crossover_against_the_a100(const std::vector<SizePoint>& sweep) {
  require_points(sweep);
  const SizePoint* crossover = first_compute_bound(sweep);
  const std::string a100 =
      "the A100 was overhead-bound at n = 64 and compute-bound at n = 4096, the two sizes the article reports";
  if (!crossover) return fmt::format("No size up to n = {} was compute-bound here; {}", sweep.back().n, a100);
  return fmt::format("Here the first compute-bound size is n = {}; {}", crossover->n, a100);
}

Finding smallest_size_overhead_bound(const std::vector<SizePoint>& sweep) {
  if (sweep.empty()) throw std::invalid_argument("an empty sweep");
  return {sweep.front().busy < 0.5, "the smallest size is overhead-bound",
          fmt::format("busy fraction {:.2f} at n = {}", sweep.front().busy, sweep.front().n)};
}

std::int64_t first_compute_bound_size(const std::vector<SizePoint>& sweep) {
  for (const auto& p : sweep)
    if (p.busy >= 0.5) return p.n;
  return 0;
}

}  // namespace workbook::findings02
