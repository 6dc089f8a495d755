// The fused gelu_tanh x mul loop, in a file of its own: no LibTorch headers (it compiles in a
// moment and needs no precompiled header), built with -O3 -fno-trapping-math (lessons/support/
// CMakeLists.txt) so the loop vectorises.
#include "gelu_mul_kernel.h"

#include <cstring>

namespace workbook::detail {

namespace {

// exp(t) without a library call, so the loop around it vectorises: t = n ln 2 + r with |r| <= ln 2 / 2
// (Cody-Waite, two constants), e^r by Cephes' expf polynomial (about 1 ulp), 2^n put straight
// into the exponent bits. Only the exponent is clamped (to the normal range, NaN to the low end):
// clamping t itself lets GCC constant-fold the clamped branch and compute every division twice.
inline float exp_branch_free(float t) {
  // Round t / ln 2 to the nearest integer with the 1.5 * 2^23 trick (no rounding call needed).
  const float n = (t * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const float r = (t - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = p * r * r + r + 1.0f;
  float k = n >= -126.0f ? n : -126.0f;  // plain selects: min/max instructions, no branches
  k = k <= 127.0f ? k : 127.0f;
  const std::int32_t bits = (static_cast<std::int32_t>(k) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return er * scale;
}

// gelu_tanh(a) * b for one element, as x * sigmoid(2u) = x / (1 + e^(-2u)) with
// u = sqrt(2/pi) (x + 0.044715 x^3): the same function as 0.5 x (1 + tanh(u)), but without the
// cancellation of 1 + tanh(u) for negative x, so it stays within a few ulp of the exact value
// everywhere (eager's float formula loses digits below x = -2).
inline float gelu_tanh_mul(float x, float y) {
  const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  return x * y / (1.0f + exp_branch_free(-2.0f * u));
}

}  // namespace

// Compiled twice where GCC or Clang targets x86-64: for AVX2 + FMA (8 floats per instruction) and
// for the baseline (SSE2, 4); the loader picks the clone the CPU runs.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
void gelu_tanh_mul_range(const float* __restrict x, const float* __restrict y, float* __restrict z, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) z[i] = gelu_tanh_mul(x[i], y[i]);
}

}  // namespace workbook::detail
