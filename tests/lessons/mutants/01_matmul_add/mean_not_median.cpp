// Mutant of exercise 01 — the mean of the other steps' gaps instead of their median.
// must fail: the other steps' gap is their median: one slow step moves a mean, not the median
#include "01_matmul_add.h"

#include <fmt/format.h>

#include <numeric>

#include "workbook/lesson/timing.h"
#include "workbook/profiler/chrome_trace.h"
#include "workbook/profiler/region.h"

namespace exercises {
namespace {

// The gap per recorded step, in step order: matmul_add's start to its aten::matmul's start.
std::vector<double> gaps_us(const workbook::Profile& p) {
  std::vector<double> gaps;
  for (auto region : p.find("matmul_add")) {
    const auto matmul = p.under(region, "aten::matmul");
    if (!matmul.empty()) gaps.push_back(double(p[matmul.front()].start_ns - p[region].start_ns) / 1e3);
  }
  return gaps;
}

}  // namespace

std::vector<CycleGaps> profile_cycles(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                                      const workbook::Schedule& schedule, const std::filesystem::path& dir) {
  std::vector<CycleGaps> cycles;
  workbook::SessionOptions options;
  options.on_trace_ready = [&](const workbook::Profile& p) {
    CycleGaps cycle;
    cycle.trace = dir / fmt::format("cycle_{}.json", cycles.size());
    workbook::write_chrome_trace(p, cycle.trace);
    cycle.recorded_steps = int(p.find_prefix("ProfilerStep#").size());
    const std::vector<double> gaps = gaps_us(p);
    if (!gaps.empty()) cycle.first_gap_us = gaps.front();
    if (gaps.size() > 1)
      cycle.median_other_gap_us = std::accumulate(gaps.begin() + 1, gaps.end(), 0.0) / double(gaps.size() - 1);
    cycles.push_back(cycle);
  };
  workbook::Session session(schedule, options);
  for (int step = 0; step < schedule.total_steps(); ++step) {
    {
      workbook::Region region("matmul_add");
      torch::Tensor y = torch::add(torch::matmul(x, w), b);
    }
    session.step();
  }
  session.finish();
  return cycles;
}

}  // namespace exercises
