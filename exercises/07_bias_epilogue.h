#pragma once
/// \file
/// \brief Exercise 07: the bias epilogue by hand — the few lines a GEMM kernel runs between its
/// last multiply-add and its one store.

#include <cstdint>
#include <vector>

#include "workbook/support/host_device.h"

namespace exercises {

//! [contract]
/// The activation an epilogue may apply after the bias.
enum class Activation { none, relu, gelu_tanh };

/// What a GEMM's epilogue needs besides the accumulator: the bias, one value per output column
/// (length N, the Linear's out_features), and an optional activation.
struct BiasEpilogue {
  const float* bias = nullptr;               ///< N values
  Activation activation = Activation::none;  ///< applied after the bias
  const float* residual = nullptr;           ///< optional [M, N] values added last (a skip connection)
  int residual_stride = 0;                   ///< elements from one residual row to the next (0: one row, repeated)
};

/// The value a GEMM stores at Y[row][col] once its accumulator holds sum_k X[row][k]·W[col][k]:
/// activation(accumulator + bias[col]), plus residual[row·residual_stride + col] when a residual
/// is given — y = act(x·Wᵀ + b) + r, a transformer block's skip connection, fused so that the
/// output is still stored once. The bias broadcasts over rows and is added exactly once; the
/// residual is read where its row stride says (a stride of 0 repeats one row, as an expanded torch
/// view does; rows far apart in a large buffer may put row·residual_stride past 2^31, even 2^32: an exact integer offset), and comes
/// after the activation.
/// relu(v) = max(v, 0), a NaN kept (as torch::relu keeps it); gelu_tanh(v) = 0.5·v·(1 + tanh(√(2/π)·(v + 0.044715·v³))), which is
/// torch::gelu(v, "tanh") — in float still about -3·10⁻⁷ at v = -5, not 0. Runs on the CPU and, unchanged, inside workbook::tiled_gemm on a GPU.
WORKBOOK_HOST_DEVICE float apply_epilogue(float accumulator, int row, int col, const BiasEpilogue& epilogue);

/// The CPU twin of the kernel: Y[M, N] = epilogue(X[M, K] · W[N, K]^T), row-major, one
/// accumulator per output element handed to apply_epilogue before the single store (K may be 0:
/// each accumulator is then an empty sum, 0). x holds M·K floats, w N·K and the result M·N, each
/// fewer than 2^31 (the CPU twin's sizes; the residual is any buffer's pointer, see above).
std::vector<float> gemm_with_epilogue(const std::vector<float>& x, const std::vector<float>& w, int m, int n, int k,
                                      const BiasEpilogue& epilogue);
//! [contract]

}  // namespace exercises
