// Mutant of exercise 10 — divides by the span of the trace instead of the self time of all events.
// must fail: nested ops and two steps apart: ranked by self time, share of the self time of all events
#include "10_shapes_flame.h"

#include <algorithm>
#include <stdexcept>

#include "workbook/profiler/key_averages.h"

namespace exercises {

ShapeCost most_expensive_shape(const workbook::Profile& profile) {
  const workbook::KeyAverages by_shape(profile, /*group_by_input_shape=*/true);
  const auto rows = by_shape.sorted("self_cpu_time_total");
  for (const auto& row : rows) {
    if (row.user_annotation || row.device_type != workbook::DeviceType::cpu || row.name == "[memory]") continue;
    ShapeCost c;
    c.op = row.name;
    c.input_shapes = row.input_shapes;
    c.self_us = row.self_cpu_us;
    c.calls = int(row.count);
    std::int64_t first = 0, last = 0;
    for (const auto& e : profile.events()) {
      if (first == 0 || e.start_ns < first) first = e.start_ns;
      last = std::max(last, e.end_ns);
    }
    c.share = last > first ? row.self_cpu_us / (double(last - first) / 1e3) : 0.0;
    return c;
  }
  throw std::invalid_argument("most_expensive_shape: the profile has no operator");
}

}  // namespace exercises
