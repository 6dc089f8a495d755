// Lesson 07's GPU side, behind a plain C++ interface so the lesson's main stays ordinary C++
// (LibTorch, the toolkit) and nvcc only sees CUDA code. Built from 07_bias_epilogue_gpu.cu with
// the CUDA Toolkit, or from 07_bias_epilogue_without_cuda.cpp, which says why it cannot run.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace lesson07 {

/// No usable CUDA GPU (or a build without the CUDA Toolkit): the lesson says so in one line.
struct NoGpu : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The GPU the lesson runs on.
struct GpuInfo {
  std::string name;
  int major = 0, minor = 0;  // compute capability
  double memory_gib = 0;
  int driver_version = 0, runtime_version = 0;  // 13000 = 13.0
};

/// The first GPU; throws NoGpu when there is none.
GpuInfo require_gpu();

/// The three ways to compute Y = X·W^T + b, and the separate bias kernel on its own.
enum class Way { cublas_then_bias_kernel, cublaslt_bias_epilogue, tiled_gemm_epilogue, bias_kernel_alone };

/// "cublas+bias_kernel", "cublasLt_bias_epilogue", "tiled_gemm_epilogue", "bias_kernel_alone".
const char* way_name(Way way);

/// Random float32 X [M, K], W [N, K] (nn::Linear's layout), b [N] on the GPU, and Y [M, N].
class BiasGemm {
 public:
  BiasGemm(int m, int n, int k, unsigned seed);
  ~BiasGemm();
  BiasGemm(const BiasGemm&) = delete;
  BiasGemm& operator=(const BiasGemm&) = delete;

  /// Enqueues one computation of Y (asynchronous, like every kernel launch).
  void run(Way way);
  /// Waits for the GPU.
  void synchronize();
  /// Largest |Y - reference| / (sum_k |X·W| + 1e-6) over `samples` entries of Y picked at random,
  /// the reference computed in float64 on the host: a relative error that means the same at any K.
  double sampled_relative_error(Way way, int samples);
  /// The time of each of `iterations` runs, measured with CUDA events around each, after
  /// `warmup` runs that are not kept.
  std::vector<float> times_us(Way way, int warmup, int iterations);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace lesson07
