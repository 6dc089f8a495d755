#include "workbook/findings/10_shapes_flame.h"

#include <fmt/format.h>

#include <regex>
#include <sstream>

namespace workbook::findings10 {

Finding one_row_per_shape(const KeyAverages& grouped) {
  std::size_t mm_rows = 0;
  for (const auto& row : grouped.rows()) mm_rows += row.name == "aten::mm";
  return {mm_rows >= 3, "the same op appears once per input shape: aten::mm is several rows here",
          fmt::format("{} aten::mm rows, one per distinct list of input shapes", mm_rows)};
}

Finding stacks_well_formed(const std::string& stacks) {
  std::istringstream lines(stacks);
  std::size_t count = 0, well_formed = 0;
  const std::regex format(R"(^[^ ;]+(;[^ ;]+)* [0-9]+$)");
  for (std::string line; std::getline(lines, line); ++count) well_formed += std::regex_match(line, format);
  return {count > 0 && well_formed == count, "every line of stacks.txt is 'frame;frame;... microseconds'",
          fmt::format("{} of {} lines well formed", well_formed, count)};
}

namespace {

// The operator row with the most self CPU time, or nullptr.
const KeyAverage* costliest_op(const KeyAverages& table) {
  const KeyAverage* best = nullptr;
  for (const auto& row : table.rows()) {
    if (row.user_annotation || row.device_type != DeviceType::cpu || row.name == "[memory]") continue;
    if (!best || row.self_cpu_us > best->self_cpu_us) best = &row;
  }
  return best;
}

}  // namespace

Finding top_op_owns_top_shape(const KeyAverages& by_name, const KeyAverages& by_shape) {
  const KeyAverage *name = costliest_op(by_name), *shape = costliest_op(by_shape);
  if (!name || !shape) return {false, "the op with the most self time also owns the costliest shape", "no operator"};
  return {name->name == shape->name, "the op with the most self time also owns the costliest shape",
          fmt::format("by name: {} ({:.1f} us self); by shape: {} at {} ({:.1f} us self)", name->name,
                      name->self_cpu_us, shape->name, shape->input_shapes, shape->self_cpu_us)};
}

}  // namespace workbook::findings10
