#include "workbook/lesson/machine.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <torch/cuda.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "workbook/profiler/session.h"

namespace workbook {
namespace {

template <typename Fn>
Fn* find_symbol(const char* name) {
  return reinterpret_cast<Fn*>(::dlsym(RTLD_DEFAULT, name));
}

std::string library_of(const void* address) {
  Dl_info info{};
  if (!address || !::dladdr(address, &info) || !info.dli_fname) return "";
  std::error_code ec;
  auto real = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::string(info.dli_fname) : real.string();
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

}  // namespace

MachineInfo machine_info() {
  MachineInfo m;
  m.cpu_model = cpu_model();
  m.cores = int(std::thread::hardware_concurrency());
  m.torch_version = libtorch_version();
  m.torch_library = library_of(reinterpret_cast<const void*>(&at::get_num_threads));
  m.kineto = kineto_available();
  m.cuda = torch::cuda::is_available();
  m.torch_threads = at::get_num_threads();
  m.blas_library = library_of(::dlsym(RTLD_DEFAULT, "sgemm_"));
  if (auto config = find_symbol<char*()>("openblas_get_config")) {
    m.blas_name = config();
    if (auto core = find_symbol<char*()>("openblas_get_corename")) m.blas_core = core();
    if (auto threads = find_symbol<int()>("openblas_get_num_threads")) m.blas_threads = threads();
  } else if (m.blas_library.find("blas/libblas") != std::string::npos) {
    m.blas_name = "reference BLAS (netlib, slow)";
  } else {
    m.blas_name = m.blas_library.empty() ? "no BLAS found" : "other BLAS";
  }
#if defined(__clang__)
  m.compiler = fmt::format("clang {}", __clang_version__);
#elif defined(__GNUC__)
  m.compiler = fmt::format("g++ {}", __VERSION__);
#endif
  return m;
}

std::string machine_line(const MachineInfo& m) {
  std::string blas = m.blas_core.empty() ? m.blas_name.substr(0, m.blas_name.find(' ', 9))
                                         : fmt::format("OpenBLAS ({} kernel)", m.blas_core);
  return fmt::format("{}, {} cores · {} · {} threads · LibTorch {} · Kineto: {} · CUDA: {}", m.cpu_model, m.cores, blas,
                     m.torch_threads, m.torch_version, m.kineto ? "yes" : "no", m.cuda ? "yes" : "no");
}

}  // namespace workbook
