#pragma once
/// \file
/// \brief Lesson 06's figures for `./workbook bench`: eager vs the hand-compiled code, and both
/// against AOTInductor where LibTorch has it. Each figure is a median of interleaved runs.

#include <cstdint>

namespace workbook {

/// Host microseconds per call of the eager and the compiled version of one workload.
struct EagerVsCompiled {
  double eager_us = 0;     ///< the eager version (for bench_against_inductor's rows: ours)
  double compiled_us = 0;  ///< the compiled version (for bench_against_inductor's rows: AOTInductor's)
};

/// Lesson 06's small Linear (16 x 16, grad mode on): eager nn::Linear vs the guarded addmm.
EagerVsCompiled bench_small_linear(int calls);
/// The GeGLU MLP without biases: eager Linear layers, gelu and mul vs 3 mm + the fused kernel.
EagerVsCompiled bench_geglu_mlp(std::int64_t tokens, std::int64_t dim, std::int64_t hidden);
/// The fused gelu_tanh x mul kernel alone vs eager's two ops, at [tokens, hidden].
EagerVsCompiled bench_fused_gelu_mul(std::int64_t tokens, std::int64_t hidden);

/// Ours against AOTInductor's (LibTorch >= 2.6), same weights and shapes: the small Linear's and
/// the MLP's host time, and the fused kernel's time from the kernels' own profiler events.
struct AgainstInductor {
  double ours_linear_us = 0;      ///< our small Linear's host time per call (guards + addmm)
  double inductor_linear_us = 0;  ///< AOTInductor's Linear, the same shape and weights
  double ours_kernel_us = 0;      ///< our fused gelu x mul kernel (its profiler event)
  double inductor_kernel_us = 0;  ///< Inductor's generated cpp_fused_gelu_mul kernel
  double ours_mlp_us = 0;         ///< our compiled GeGLU MLP per call
  double inductor_mlp_us = 0;     ///< AOTInductor's MLP per call
};

/// Compiles (or finds cached) both packages and measures; throws std::runtime_error without
/// AOTInductor or when Python's compile step fails.
AgainstInductor bench_against_inductor(std::int64_t tokens, std::int64_t dim, std::int64_t hidden);

}  // namespace workbook
