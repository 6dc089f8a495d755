#include "01_matmul_add.h"

#include <fmt/format.h>

#include "workbook/lesson/timing.h"
#include "workbook/profiler/chrome_trace.h"
#include "workbook/profiler/region.h"

namespace exercises {

namespace {
double gap_us(const workbook::Profile& p, workbook::EventId step) {
  auto regions = p.under(step, "matmul_add");
  auto r = regions.at(0);
  auto mm = p.under(r, "aten::mm").at(0);
  return double(p[mm].start_ns - p[r].start_ns) / 1000.0;
}
}  // namespace

std::vector<CycleGaps> profile_cycles(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                                      const workbook::Schedule& schedule, const std::filesystem::path& dir) {
  std::vector<CycleGaps> cycles;
  workbook::SessionOptions options;
  options.on_trace_ready = [&](const workbook::Profile& p) {
    CycleGaps g;
    g.trace = dir / fmt::format("cycle_{}.json", cycles.size());
    workbook::write_chrome_trace(p, g.trace);
    auto steps = p.find_prefix("ProfilerStep#");
    g.recorded_steps = int(steps.size());
    g.first_gap_us = gap_us(p, steps.at(0));
    std::vector<double> others;
    for (std::size_t i = 1; i < steps.size(); ++i) others.push_back(gap_us(p, steps[i]));
    g.median_other_gap_us = others.empty() ? 0 : workbook::median(others);
    cycles.push_back(g);
  };
  workbook::Session session(schedule, options);
  for (int i = 0; i < schedule.total_steps(); ++i) {
    {
      workbook::Region region("matmul_add");
      auto y = torch::add(torch::matmul(x, w), b);
    }
    session.step();
  }
  session.finish();
  return cycles;
}

}  // namespace exercises
