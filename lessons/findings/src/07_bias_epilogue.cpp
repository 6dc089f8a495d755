#include "workbook/findings/07_bias_epilogue.h"

#include <fmt/format.h>

#include <stdexcept>

namespace workbook::findings07 {
namespace {

void require_timed(const WayTimes& t) {
  for (double us : {t.bias_kernel_after_gemm, t.library_epilogue, t.tiled_epilogue, t.bias_kernel_alone})
    if (!(us > 0)) throw std::invalid_argument(fmt::format("lesson 07's timings need positive medians, not {}", us));
}

}  // namespace

Finding separate_bias_kernel_costs(const WayTimes& t) {
  require_timed(t);
  const double extra = t.bias_kernel_after_gemm - t.library_epilogue;
  return {extra > 0,
          "adding the bias in a second kernel, after the GEMM stored Y, took longer than adding it in the GEMM's "
          "epilogue",
          fmt::format("medians: (a) GEMM then bias kernel {:.1f} us, (b) bias epilogue {:.1f} us: (a) - (b) = {:.1f} "
                      "us; the bias kernel alone {:.1f} us",
                      t.bias_kernel_after_gemm, t.library_epilogue, extra, t.bias_kernel_alone)};
}

Finding tiled_slower_than_library(const WayTimes& t) {
  require_timed(t);
  return {t.tiled_epilogue > t.library_epilogue, "the hand-written tiled GEMM was slower than cuBLASLt's epilogue",
          fmt::format("medians: (c) tiled {:.1f} us, (b) library {:.1f} us", t.tiled_epilogue, t.library_epilogue)};
}

std::string tiled_against_library(const WayTimes& t) {
  require_timed(t);
  if (t.tiled_epilogue > t.library_epilogue)
    return fmt::format(
        "Here it took {:.1f}x the time of (b): a readable one-output-per-thread GEMM is no match for cuBLAS's tuned "
        "kernels, which is why libraries own the GEMM and let you choose the epilogue.",
        t.tiled_epilogue / t.library_epilogue);
  return fmt::format(
      "Here it was not slower than (b) ({:.1f} against {:.1f} us): at this size the tuned kernel's advantage did not "
      "show; try a larger --size.",
      t.tiled_epilogue, t.library_epilogue);
}

}  // namespace workbook::findings07
