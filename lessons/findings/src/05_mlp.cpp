#include "workbook/findings/05_mlp.h"

#include <fmt/format.h>

namespace workbook::findings05 {

Finding geglu_runs_five_compute_ops(const Profile& p, EventId forward) {
  const std::size_t mm = p.count_under(forward, "aten::mm"), gelu = p.count_under(forward, "aten::gelu"),
                    mul = p.count_under(forward, "aten::mul");
  return {mm == 3 && gelu == 1 && mul == 1,
          "one GeGLU forward runs the articles' 5 compute ops: 3 GEMMs (aten::mm), one aten::gelu, one aten::mul",
          fmt::format("aten::mm x{}, aten::gelu x{}, aten::mul x{}", mm, gelu, mul)};
}

std::size_t gemms_in_forward(const Profile& p, EventId forward) {
  return p.count_under(forward, "aten::mm") + p.count_under(forward, "aten::addmm");
}

}  // namespace workbook::findings05
