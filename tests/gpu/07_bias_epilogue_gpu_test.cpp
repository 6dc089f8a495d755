// Exercise 07's GPU checks: apply_epilogue inside a real tiled GEMM kernel, against a float64
// reference. Skipped, with a visible message, where no CUDA GPU can run kernels.
// Its own main: the suite exits 77 (skipped) before doctest runs where there is no GPU.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "07_bias_epilogue_kernel.h"

namespace {

using exercises::Activation;

double activate(double v, Activation activation) {
  if (activation == Activation::relu) return v > 0 ? v : 0;
  if (activation == Activation::gelu_tanh)
    return 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
  return v;
}

std::vector<float> random_normal(std::size_t count, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> v(count);
  for (float& value : v) value = normal(rng);
  return v;
}

}  // namespace

TEST_CASE("apply_epilogue inside workbook::tiled_gemm matches a float64 reference") {
  std::mt19937 rng(7);
  // Shapes that are and are not multiples of the 16-wide tiles.
  struct Shape {
    int m, n, k;
  };
  for (const Shape shape : std::initializer_list<Shape>{{1, 1, 1}, {37, 29, 50}, {128, 96, 64}, {300, 17, 513}}) {
    const int m = shape.m, n = shape.n, k = shape.k;
    const std::vector<float> x = random_normal(std::size_t(m) * k, rng), w = random_normal(std::size_t(n) * k, rng),
                             bias = random_normal(std::size_t(n), rng);
    for (Activation activation : {Activation::none, Activation::relu, Activation::gelu_tanh}) {
      INFO("m=" << m << " n=" << n << " k=" << k << " activation=" << int(activation));
      const std::vector<float> y = gpu_checks::tiled_gemm_with_exercise_epilogue(x, w, bias, m, n, k, activation);
      int wrong = 0, nan = 0;
      for (int row = 0; row < m; ++row)
        for (int col = 0; col < n; ++col) {
          double exact = bias[col], magnitude = std::abs(bias[col]);
          for (int i = 0; i < k; ++i) {
            exact += double(x[std::size_t(row) * k + i]) * w[std::size_t(col) * k + i];
            magnitude += std::abs(double(x[std::size_t(row) * k + i]) * w[std::size_t(col) * k + i]);
          }
          const float got = y[std::size_t(row) * n + col];
          nan += std::isnan(got);
          wrong += !(std::abs(got - activate(exact, activation)) <= 1e-5 * magnitude + 1e-5);
        }
      INFO("NaN on the GPU means apply_epilogue is not implemented yet");
      CHECK(nan == 0);
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("the residual epilogue inside workbook::tiled_gemm: y = act(x W^T + b) + r") {
  std::mt19937 rng(9);
  const int m = 45, n = 33, k = 70;
  const std::vector<float> x = random_normal(std::size_t(m) * k, rng), w = random_normal(std::size_t(n) * k, rng),
                           bias = random_normal(std::size_t(n), rng), residual = random_normal(std::size_t(m) * n, rng);
  for (Activation activation : {Activation::none, Activation::gelu_tanh}) {
    const std::vector<float> y =
        gpu_checks::tiled_gemm_with_exercise_epilogue(x, w, bias, m, n, k, activation, residual);
    int wrong = 0;
    for (int row = 0; row < m; ++row)
      for (int col = 0; col < n; ++col) {
        double exact = bias[col], magnitude = std::abs(bias[col]) + 1;
        for (int i = 0; i < k; ++i) {
          exact += double(x[std::size_t(row) * k + i]) * w[std::size_t(col) * k + i];
          magnitude += std::abs(double(x[std::size_t(row) * k + i]) * w[std::size_t(col) * k + i]);
        }
        const double want = activate(exact, activation) + residual[std::size_t(row) * n + col];
        wrong += !(std::abs(y[std::size_t(row) * n + col] - want) <= 1e-5 * magnitude + 1e-5);
      }
    CHECK(wrong == 0);
  }
}

int main(int argc, char** argv) {
  std::string why;
  if (!gpu_checks::gpu_available(why)) {
    std::printf("SKIPPED: the gpu suite needs a CUDA GPU that can run kernels (%s)\n", why.c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
