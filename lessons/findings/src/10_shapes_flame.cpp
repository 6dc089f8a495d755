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

}  // namespace workbook::findings10
