// Lesson 07's kernels and library calls: Y = X·W^T + b on the GPU three ways.
//   (a) cuBLAS GEMM into a temporary, then a hand-written bias-add kernel: two launches, and the
//       output makes an extra round trip through memory;
//   (b) cuBLASLt matmul with CUBLASLT_EPILOGUE_BIAS: the library adds the bias before its store
//       (what LibTorch's addmm asks cuBLASLt for when the bias is a vector);
//   (c) workbook::tiled_gemm, whose epilogue adds the bias before its single store.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "07_bias_epilogue_gpu.h"
#include "workbook/support/tiled_gemm.cuh"

namespace lesson07 {

namespace {

void throw_on_error(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

void throw_on_error(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + cublasGetStatusString(status));
}

//! [bias kernel]
// The separate kernel of way (a): Y = T + b, one element per thread; bias broadcast over rows.
__global__ void add_bias(const float* t, const float* bias, float* y, std::int64_t elements, int n) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < elements) y[i] = t[i] + bias[i % n];
}
//! [bias kernel]

struct AddBias {
  const float* bias;
  __device__ float operator()(float accumulator, int, int col) const { return accumulator + bias[col]; }
};

template <class T>
struct DeviceBuffer {
  T* data = nullptr;
  explicit DeviceBuffer(std::size_t count) { throw_on_error(cudaMalloc(&data, count * sizeof(T)), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(data); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

std::vector<float> random_normal(std::size_t count, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> v(count);
  for (float& value : v) value = normal(rng);
  return v;
}

}  // namespace

GpuInfo require_gpu() {
  int count = 0, driver = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  cudaDriverGetVersion(&driver);
  if (status != cudaSuccess || count == 0)
    throw NoGpu(std::string("lesson 07 needs a CUDA GPU: ") + (driver == 0             ? "no NVIDIA driver here"
                                                               : status != cudaSuccess ? cudaGetErrorString(status)
                                                                                       : "no CUDA device found"));
  cudaDeviceProp properties{};
  throw_on_error(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");
  GpuInfo info;
  info.name = properties.name;
  info.major = properties.major;
  info.minor = properties.minor;
  info.memory_gib = double(properties.totalGlobalMem) / double(1ull << 30);
  cudaDriverGetVersion(&info.driver_version);
  cudaRuntimeGetVersion(&info.runtime_version);
  return info;
}

const char* way_name(Way way) {
  switch (way) {
    case Way::cublas_then_bias_kernel:
      return "cublas+bias_kernel";
    case Way::cublaslt_bias_epilogue:
      return "cublasLt_bias_epilogue";
    case Way::tiled_gemm_epilogue:
      return "tiled_gemm_epilogue";
    case Way::bias_kernel_alone:
      return "bias_kernel_alone";
  }
  return "unknown";
}

struct BiasGemm::State {
  int m, n, k;
  std::vector<float> x, w, b;  // host copies for the reference
  DeviceBuffer<float> dx, dw, db, dt, dy;
  DeviceBuffer<char> workspace;
  static constexpr std::size_t kWorkspaceBytes = 32u << 20;
  cublasHandle_t blas = nullptr;
  cublasLtHandle_t lt = nullptr;
  cublasLtMatmulDesc_t lt_op = nullptr;
  cublasLtMatrixLayout_t lt_w = nullptr, lt_x = nullptr, lt_y = nullptr;
  cublasLtMatmulHeuristicResult_t lt_algo{};

  State(int m_, int n_, int k_, std::mt19937& rng)
      : m(m_),
        n(n_),
        k(k_),
        x(random_normal(std::size_t(m) * k, rng)),
        w(random_normal(std::size_t(n) * k, rng)),
        b(random_normal(std::size_t(n), rng)),
        dx(x.size()),
        dw(w.size()),
        db(b.size()),
        dt(std::size_t(m) * n),
        dy(std::size_t(m) * n),
        workspace(kWorkspaceBytes) {}
};

BiasGemm::BiasGemm(int m, int n, int k, unsigned seed) {
  std::mt19937 rng(seed);
  state_ = std::make_unique<State>(m, n, k, rng);
  State& s = *state_;
  throw_on_error(cudaMemcpy(s.dx.data, s.x.data(), s.x.size() * sizeof(float), cudaMemcpyHostToDevice), "copy X");
  throw_on_error(cudaMemcpy(s.dw.data, s.w.data(), s.w.size() * sizeof(float), cudaMemcpyHostToDevice), "copy W");
  throw_on_error(cudaMemcpy(s.db.data, s.b.data(), s.b.size() * sizeof(float), cudaMemcpyHostToDevice), "copy b");
  throw_on_error(cublasCreate(&s.blas), "cublasCreate");
  throw_on_error(cublasLtCreate(&s.lt), "cublasLtCreate");

  // cuBLAS is column-major: the row-major Y [M, N] is a column-major [N, M] = W · X^T, where the
  // row-major W [N, K] read column-major is [K, N] (so transposed: op T) and X [M, K] is [K, M].
  // The bias then runs along the N rows of that column-major output, which is the vector
  // layout CUBLASLT_EPILOGUE_BIAS broadcasts.
  //! [cublasLt bias epilogue]
  throw_on_error(cublasLtMatmulDescCreate(&s.lt_op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t transpose = CUBLAS_OP_T, keep = CUBLAS_OP_N;
  const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
  const float* bias = s.db.data;
  throw_on_error(cublasLtMatmulDescSetAttribute(s.lt_op, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof transpose),
                 "TRANSA");
  throw_on_error(cublasLtMatmulDescSetAttribute(s.lt_op, CUBLASLT_MATMUL_DESC_TRANSB, &keep, sizeof keep), "TRANSB");
  throw_on_error(cublasLtMatmulDescSetAttribute(s.lt_op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue),
                 "EPILOGUE");
  throw_on_error(cublasLtMatmulDescSetAttribute(s.lt_op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
                 "BIAS_POINTER");
  throw_on_error(cublasLtMatrixLayoutCreate(&s.lt_w, CUDA_R_32F, k, n, k), "layout W");
  throw_on_error(cublasLtMatrixLayoutCreate(&s.lt_x, CUDA_R_32F, k, m, k), "layout X");
  throw_on_error(cublasLtMatrixLayoutCreate(&s.lt_y, CUDA_R_32F, n, m, n), "layout Y");
  //! [cublasLt bias epilogue]
  cublasLtMatmulPreference_t preference = nullptr;
  throw_on_error(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
  const std::size_t workspace_bytes = State::kWorkspaceBytes;
  cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                       sizeof workspace_bytes);
  int found = 0;
  const cublasStatus_t heuristic =
      cublasLtMatmulAlgoGetHeuristic(s.lt, s.lt_op, s.lt_w, s.lt_x, s.lt_y, s.lt_y, preference, 1, &s.lt_algo, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  throw_on_error(heuristic, "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0) throw std::runtime_error("cuBLASLt has no algorithm for a float32 GEMM with a bias epilogue here");
}

BiasGemm::~BiasGemm() {
  if (!state_) return;
  State& s = *state_;
  if (s.lt_y) cublasLtMatrixLayoutDestroy(s.lt_y);
  if (s.lt_x) cublasLtMatrixLayoutDestroy(s.lt_x);
  if (s.lt_w) cublasLtMatrixLayoutDestroy(s.lt_w);
  if (s.lt_op) cublasLtMatmulDescDestroy(s.lt_op);
  if (s.lt) cublasLtDestroy(s.lt);
  if (s.blas) cublasDestroy(s.blas);
}

void BiasGemm::run(Way way) {
  State& s = *state_;
  const float one = 1.0f, zero = 0.0f;
  const std::int64_t elements = std::int64_t(s.m) * s.n;
  const int threads = 256;
  const auto blocks = unsigned((elements + threads - 1) / threads);
  switch (way) {
    case Way::cublas_then_bias_kernel:
      throw_on_error(cublasSgemm(s.blas, CUBLAS_OP_T, CUBLAS_OP_N, s.n, s.m, s.k, &one, s.dw.data, s.k, s.dx.data, s.k,
                                 &zero, s.dt.data, s.n),
                     "cublasSgemm");
      add_bias<<<blocks, threads>>>(s.dt.data, s.db.data, s.dy.data, elements, s.n);
      break;
    case Way::bias_kernel_alone:
      add_bias<<<blocks, threads>>>(s.dt.data, s.db.data, s.dy.data, elements, s.n);
      break;
    case Way::cublaslt_bias_epilogue:
      throw_on_error(cublasLtMatmul(s.lt, s.lt_op, &one, s.dw.data, s.lt_w, s.dx.data, s.lt_x, &zero, s.dy.data, s.lt_y,
                                    s.dy.data, s.lt_y, &s.lt_algo.algo, s.workspace.data, State::kWorkspaceBytes, 0),
                     "cublasLtMatmul");
      break;
    case Way::tiled_gemm_epilogue:
      workbook::tiled_gemm<<<workbook::tiled_gemm_grid(s.m, s.n), workbook::tiled_gemm_block()>>>(
          s.dx.data, s.dw.data, s.dy.data, s.m, s.n, s.k, AddBias{s.db.data});
      break;
  }
  throw_on_error(cudaGetLastError(), way_name(way));
}

void BiasGemm::synchronize() { throw_on_error(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

double BiasGemm::sampled_relative_error(Way way, int samples) {
  State& s = *state_;
  throw_on_error(cudaMemset(s.dy.data, 0xff, std::size_t(s.m) * s.n * sizeof(float)), "cudaMemset");  // NaN
  run(way);
  std::vector<float> y(std::size_t(s.m) * s.n);
  throw_on_error(cudaMemcpy(y.data(), s.dy.data, y.size() * sizeof(float), cudaMemcpyDeviceToHost), "copy Y");
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int> pick_row(0, s.m - 1), pick_col(0, s.n - 1);
  double worst = 0;
  for (int i = 0; i < samples; ++i) {
    const int row = pick_row(rng), col = pick_col(rng);
    double exact = s.b[col], magnitude = std::abs(double(s.b[col]));
    for (int kk = 0; kk < s.k; ++kk) {
      const double product = double(s.x[std::size_t(row) * s.k + kk]) * double(s.w[std::size_t(col) * s.k + kk]);
      exact += product;
      magnitude += std::abs(product);
    }
    const double error = std::abs(double(y[std::size_t(row) * s.n + col]) - exact) / (magnitude + 1e-6);
    worst = std::isnan(error) ? INFINITY : std::max(worst, error);
  }
  return worst;
}

std::vector<float> BiasGemm::times_us(Way way, int warmup, int iterations) {
  for (int i = 0; i < warmup; ++i) run(way);
  std::vector<cudaEvent_t> marks(std::size_t(iterations) + 1);
  for (cudaEvent_t& e : marks) throw_on_error(cudaEventCreate(&e), "cudaEventCreate");
  throw_on_error(cudaEventRecord(marks[0]), "cudaEventRecord");
  for (int i = 0; i < iterations; ++i) {
    run(way);
    throw_on_error(cudaEventRecord(marks[std::size_t(i) + 1]), "cudaEventRecord");
  }
  synchronize();
  std::vector<float> times(static_cast<std::size_t>(iterations));
  for (int i = 0; i < iterations; ++i) {
    float ms = 0;
    throw_on_error(cudaEventElapsedTime(&ms, marks[std::size_t(i)], marks[std::size_t(i) + 1]), "cudaEventElapsedTime");
    times[std::size_t(i)] = ms * 1000.0f;
  }
  for (cudaEvent_t& e : marks) cudaEventDestroy(e);
  return times;
}

}  // namespace lesson07
