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

}  // namespace workbook::findings05
