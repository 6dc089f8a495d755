// Mutant of exercise 10 — ranks by total time, as lesson 10's table is sorted.
// must fail: nested ops and two steps apart: ranked by self time, share of the self time of all events
#include "10_shapes_flame.h"

#include <stdexcept>

#include "workbook/profiler/key_averages.h"

namespace exercises {

ShapeCost most_expensive_shape(const workbook::Profile& profile) {
  const workbook::KeyAverages by_shape(profile, /*group_by_input_shape=*/true);
  const auto rows = by_shape.sorted("cpu_time_total");
  for (const auto& row : rows) {
    if (row.user_annotation || row.device_type != workbook::DeviceType::cpu || row.name == "[memory]") continue;
    ShapeCost c;
    c.op = row.name;
    c.input_shapes = row.input_shapes;
    c.self_us = row.self_cpu_us;
    c.calls = int(row.count);
    c.share = by_shape.self_cpu_total_us() > 0 ? row.self_cpu_us / by_shape.self_cpu_total_us() : 0.0;
    return c;
  }
  throw std::invalid_argument("most_expensive_shape: the profile has no operator");
}

}  // namespace exercises
