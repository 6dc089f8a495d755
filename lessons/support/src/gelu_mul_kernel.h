#pragma once
// The fused gelu_tanh x mul loop behind workbook::fused_gelu_mul (compile.h).

#include <cstdint>

namespace workbook::detail {

/// z[i] = gelu_tanh(x[i]) * y[i] for i in [0, n), within a few ulp of the exact value.
void gelu_tanh_mul_range(const float* x, const float* y, float* z, std::int64_t n);

}  // namespace workbook::detail
