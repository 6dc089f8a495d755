// Built with the CUDA Toolkit (plain C++ against the runtime API; no nvcc needed).
#include "workbook/lesson/cuda_runtime_info.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

namespace workbook {

namespace {
std::string version(int v) { return fmt::format("{}.{}", v / 1000, v % 1000 / 10); }
}  // namespace

std::string describe_cuda_runtime() {
  int runtime = 0, driver = 0, count = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  const std::string versions =
      fmt::format("driver CUDA {} · runtime {}", driver ? version(driver) : "none", version(runtime));
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess)
    return fmt::format("no usable GPU ({}) · {}", driver ? cudaGetErrorString(status) : "no NVIDIA driver", versions);
  if (count == 0) return "no CUDA device found · " + versions;
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, 0);
  return fmt::format("{} (sm_{}{}, {:.0f} GiB){} · {}", p.name, p.major, p.minor,
                     double(p.totalGlobalMem) / double(1ull << 30), count > 1 ? fmt::format(", {} GPUs", count) : "",
                     versions);
}

}  // namespace workbook
