// Compiles the exercise's own source (WORKBOOK_EXERCISE_SOURCE: exercises/ or solutions/
// 07_bias_epilogue.cpp) with nvcc, so that its apply_epilogue runs inside a real kernel.
#include WORKBOOK_EXERCISE_SOURCE

#include <cuda_runtime.h>

#include <stdexcept>

#include "07_bias_epilogue_kernel.h"
#include "workbook/support/tiled_gemm.cuh"

namespace gpu_checks {

namespace {

void throw_on_error(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

struct ExerciseEpilogue {
  exercises::BiasEpilogue epilogue;  // bias points to device memory
  __device__ float operator()(float accumulator, int row, int col) const {
    return exercises::apply_epilogue(accumulator, row, col, epilogue);
  }
};

struct Device {
  float* data = nullptr;
  explicit Device(const std::vector<float>& host) : Device(host.size()) {
    throw_on_error(cudaMemcpy(data, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  explicit Device(std::size_t count) { throw_on_error(cudaMalloc(&data, count * sizeof(float)), "cudaMalloc"); }
  ~Device() { cudaFree(data); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
};

}  // namespace

bool gpu_available(std::string& why) {
  int count = 0, driver = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  cudaDriverGetVersion(&driver);
  if (status != cudaSuccess) {
    why = driver == 0 ? "no NVIDIA driver here" : cudaGetErrorString(status);
    return false;
  }
  if (count == 0) why = "no CUDA device found";
  return count > 0;
}

std::vector<float> tiled_gemm_with_exercise_epilogue(const std::vector<float>& x, const std::vector<float>& w,
                                                     const std::vector<float>& bias, int m, int n, int k,
                                                     exercises::Activation activation,
                                                     const std::vector<float>& residual) {
  Device dx(x), dw(w), db(bias), dy(std::size_t(m) * n);
  Device dr(residual.empty() ? std::vector<float>(1) : residual);
  const exercises::BiasEpilogue epilogue{db.data, activation, residual.empty() ? nullptr : dr.data, n};
  workbook::tiled_gemm<<<workbook::tiled_gemm_grid(m, n), workbook::tiled_gemm_block()>>>(
      dx.data, dw.data, dy.data, m, n, k, ExerciseEpilogue{epilogue});
  throw_on_error(cudaGetLastError(), "tiled_gemm launch");
  std::vector<float> y(std::size_t(m) * n);
  throw_on_error(cudaMemcpy(y.data(), dy.data, y.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return y;
}

}  // namespace gpu_checks
