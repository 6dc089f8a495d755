// `./workbook doctor`: what the lessons will run with, and what to fix.
#include <fmt/format.h>

#include "workbook/lesson/cuda_runtime_info.h"
#include "workbook/lesson/machine.h"

int main() {
  const workbook::MachineInfo m = workbook::machine_info();
  auto row = [](const char* key, const std::string& value) { fmt::print("  {:<18} {}\n", key, value); };
  fmt::print("workbook doctor\n");
  row("CPU", fmt::format("{} ({} logical cores)", m.cpu_model, m.cores));
  row("LibTorch", fmt::format("{} ({})", m.torch_version, m.torch_library));
  row("Kineto", m.kineto ? "yes (LibTorch can save its own traces)" : "no (the workbook writes traces itself)");
  row("LibTorch CUDA", m.cuda ? "yes (lessons default to --device cuda, bfloat16)" : "no (lessons run on the CPU)");
  row("GPU", workbook::describe_cuda_runtime());
  row("BLAS", fmt::format("{} ({})", m.blas_name, m.blas_library.empty() ? "not loaded" : m.blas_library));
  row("BLAS kernel", m.blas_core.empty() ? "unknown" : m.blas_core);
  if (m.blas_threads) row("BLAS threads", std::to_string(m.blas_threads));
  row("intra-op threads", std::to_string(m.torch_threads));
  row("compiler", m.compiler);
  if (m.blas_name.rfind("reference", 0) == 0)
    fmt::print("\nwarning: the reference BLAS is ~20x slower than OpenBLAS here; run scripts/setup-deps.sh\n");
  return 0;
}
