// The GPU side of exercise 07's GPU checks: the learner's (or the solution's) apply_epilogue
// compiled by nvcc into workbook::tiled_gemm. Plain C++ interface: the doctest driver is
// ordinary C++.
#pragma once

#include <string>
#include <vector>

#include "07_bias_epilogue.h"

namespace gpu_checks {

/// True when a CUDA GPU can run kernels; otherwise false and `why` says what is missing.
bool gpu_available(std::string& why);

/// Y [M, N] computed on the GPU by workbook::tiled_gemm with exercises::apply_epilogue as its
/// epilogue; X [M, K], W [N, K], bias [N] row-major on the host.
std::vector<float> tiled_gemm_with_exercise_epilogue(const std::vector<float>& x, const std::vector<float>& w,
                                                     const std::vector<float>& bias, int m, int n, int k,
                                                     exercises::Activation activation,
                                                     const std::vector<float>& residual = {});

}  // namespace gpu_checks
