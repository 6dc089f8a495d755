// Solution 07: the bias epilogue.
//
// What to notice: the bias is indexed by column only, the residual by row and column, and the residual comes
// after the activation: y = act(x W^T + b) + r, still stored once.
#include "07_bias_epilogue.h"

#include <cmath>

namespace exercises {

WORKBOOK_HOST_DEVICE float apply_epilogue(float accumulator, int row, int col, const BiasEpilogue& epilogue) {
  // The bias broadcasts over rows: one value per output column.
  float v = accumulator + epilogue.bias[col];
  switch (epilogue.activation) {
    case Activation::relu:
      v = v < 0.0f ? 0.0f : v;  // NaN < 0 is false: a NaN stays, as in torch::relu
      break;
    case Activation::gelu_tanh: {
      const float sqrt_2_over_pi = 0.7978845608028654f;
      v = 0.5f * v * (1.0f + tanhf(sqrt_2_over_pi * (v + 0.044715f * v * v * v)));
      break;
    }
    case Activation::none:
      break;
  }
  // The residual is indexed by row and column (size_t: M·stride may pass 2^31), after the activation.
  if (epilogue.residual) v += epilogue.residual[std::size_t(row) * epilogue.residual_stride + col];
  return v;
}

std::vector<float> gemm_with_epilogue(const std::vector<float>& x, const std::vector<float>& w, int m, int n, int k,
                                      const BiasEpilogue& epilogue) {
  std::vector<float> y(std::size_t(m) * std::size_t(n));
  for (int row = 0; row < m; ++row)
    for (int col = 0; col < n; ++col) {
      float accumulator = 0.0f;
      for (int i = 0; i < k; ++i) accumulator += x[std::size_t(row) * k + i] * w[std::size_t(col) * k + i];
      y[std::size_t(row) * n + col] = apply_epilogue(accumulator, row, col, epilogue);
    }
  return y;
}

}  // namespace exercises
