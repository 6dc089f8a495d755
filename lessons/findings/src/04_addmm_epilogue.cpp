#include "workbook/findings/04_addmm_epilogue.h"

#include <fmt/format.h>

namespace workbook::findings04 {
namespace {

std::size_t adds_in(const Profile& p, std::string_view forward) {
  return p.count_under(first_named(p, forward), "aten::add");
}

std::size_t large_allocations_in(const Profile& p, std::string_view forward, std::int64_t bytes) {
  std::size_t n = 0;
  for (EventId d : p.descendants(first_named(p, forward)))
    n += p[d].category == Category::memory && p[d].bytes >= bytes;
  return n;
}

}  // namespace

Finding bias_inside_the_op(const Profile& p) {
  const std::size_t unfused = adds_in(p, "unfused"), fused = adds_in(p, "fused"), linear = adds_in(p, "nn_linear");
  return {unfused == 1 && fused == 0 && linear == 0,
          "only the unfused forward has an aten::add; addmm and nn::Linear add the bias inside the op",
          fmt::format("aten::add per forward: unfused {}, fused {}, nn_linear {}", unfused, fused, linear)};
}

Finding one_more_output_buffer(const Profile& p, std::int64_t output_bytes) {
  const std::size_t unfused = large_allocations_in(p, "unfused", output_bytes),
                    fused = large_allocations_in(p, "fused", output_bytes);
  return {unfused == fused + 1, "the unfused forward allocates one more [M, N] buffer than the fused one",
          fmt::format("[M, N] allocations per forward: unfused {}, fused {}", unfused, fused)};
}

Finding bias_copied_into_output(const Profile& p) {
  std::size_t copies = 0;
  for (EventId addmm : p.under(first_named(p, "fused"), "aten::addmm")) copies += p.count_under(addmm, "aten::copy_");
  return {copies >= 1,
          "on the CPU, addmm first copies the broadcast bias into its output (aten::copy_ beneath aten::addmm)",
          fmt::format("{} aten::copy_ beneath the fused forward's aten::addmm", copies)};
}

}  // namespace workbook::findings04
