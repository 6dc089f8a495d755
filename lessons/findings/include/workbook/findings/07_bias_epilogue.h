#pragma once
/// \file
/// \brief Lesson 07's findings: what the three ways of Y = X·Wᵀ + b timed in this run (CUDA events).
///
/// Each takes the medians the lesson measured, in µs per run; a median that is not a positive
/// number throws std::invalid_argument (a way that did not run is never "fast").

#include <string>

#include "workbook/findings/finding.h"

namespace workbook::findings07 {

/// The medians of the lesson's four timed ways, in µs.
struct WayTimes {
  double bias_kernel_after_gemm = 0;  ///< (a) cuBLAS GEMM, then a bias kernel
  double library_epilogue = 0;        ///< (b) cuBLASLt with the bias epilogue
  double tiled_epilogue = 0;          ///< (c) the hand-written tiled GEMM with its epilogue
  double bias_kernel_alone = 0;       ///< the bias kernel by itself
};

/// The separate bias kernel made way (a) slower than the epilogue (b): shown when (a)'s median is
/// above (b)'s; the evidence sets the difference beside the bias kernel's own time.
Finding separate_bias_kernel_costs(const WayTimes& t);

/// The hand-written tiled kernel (c) was slower than the library's epilogue (b): its median is above
/// (b)'s.
Finding tiled_slower_than_library(const WayTimes& t);

/// The hand-written tiled kernel (c) against the library's epilogue (b), said either way.
std::string tiled_against_library(const WayTimes& t);

}  // namespace workbook::findings07
