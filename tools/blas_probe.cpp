// `workbook_blas_probe`: OpenBLAS's kernels, tried and timed, each in a child process with its own
// OPENBLAS_CORETYPE, so that a kernel that crashes or computes wrong results cannot take the
// caller down.
//
//   workbook_blas_probe [N]      one self-test and speed probe at N x N (default 2048): prints
//                                "ok|bad <GFLOP/s> <max relative error> <core>", exit 0 when the
//                                results match a float64 reference
//   workbook_blas_probe --kernels   the kernel OpenBLAS picks itself ("own-choice:<core> <GFLOP/s>"),
//                                then "<core> <GFLOP/s>" for each kernel the CPU's flags allow
//                                that passes its self-test
//   workbook_blas_probe --choose    the kernel the runner should export: the fastest candidate if it
//                                beats OpenBLAS's own choice by more than 10 %, else an empty line
#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <torch/types.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "blas_kernels.h"
#include "process.h"
#include "workbook/lesson/machine.h"

namespace {

int probe(std::int64_t n) {
  torch::manual_seed(0);
  double worst = 0;
  for (std::int64_t size : {std::int64_t(33), std::int64_t(256), n}) {  // odd and even, small and large
    const auto a = torch::randn({size, size}), b = torch::randn({size, size});
    const auto reference = torch::mm(a.to(torch::kDouble), b.to(torch::kDouble));
    const auto error = (torch::mm(a, b).to(torch::kDouble) - reference).abs().max() / reference.abs().max();
    worst = std::max(worst, error.item<double>());
  }
  const auto a = torch::randn({n, n}), b = torch::randn({n, n});
  torch::Tensor c = torch::mm(a, b);
  double best = 1e300;
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    c = torch::mm(a, b);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  const bool ok = worst < 1e-5;
  fmt::print("{} {:.1f} {:.2e} {}\n", ok ? "ok" : "bad", 2.0 * double(n) * double(n) * double(n) / best / 1e9, worst,
             workbook::machine_info().blas_core);
  return ok ? 0 : 1;
}

// OpenBLAS picks its kernel from the CPU model; on a model it does not know it falls back to an
// older one (measured 30 GFLOP/s with Prescott vs 105 with SkylakeX at 2048 on a 2-core AVX-512
// machine). The candidates come from the CPU's instruction-set flags (runner::blas_kernel_candidates).
struct Measured {
  std::string core;
  double gflops = 0;
  bool ok = false;
};

// One child probe; `core` empty: OpenBLAS's own choice (OPENBLAS_CORETYPE unset in the child).
Measured measure(const std::string& core) {
  // This program's own path, resolved here: "timeout" and "env" run first, and for them
  // /proc/self/exe would be themselves.
  static const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::vector<std::string> argv{"timeout", "60", self, "2048"};
  if (core.empty()) argv.insert(argv.begin(), {"env", "-u", "OPENBLAS_CORETYPE"});
  const auto [status, out] = runner::capture_process(
      argv, core.empty() ? runner::Environment{} : runner::Environment{{"OPENBLAS_CORETYPE", core}});
  Measured m;
  std::istringstream in(out);
  std::string verdict, error;
  in >> verdict >> m.gflops >> error >> m.core;
  m.ok = status == 0 && verdict == "ok";
  if (!core.empty()) m.core = core;
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "2048";
  if (mode == "--kernels" || mode == "--choose") {
    const Measured own = measure("");
    std::vector<Measured> tried;
    for (const auto& core : runner::blas_kernel_candidates()) tried.push_back(measure(core));
    if (mode == "--kernels") {
      fmt::print("own-choice:{} {:.1f}\n", own.core, own.gflops);
      for (const auto& m : tried)
        if (m.ok) fmt::print("{} {:.1f}\n", m.core, m.gflops);
      return 0;
    }
    std::string pick;
    double best = own.gflops;
    for (const auto& m : tried)
      if (m.ok && m.gflops > best * 1.10) {
        best = m.gflops;
        pick = m.core;
      }
    fmt::print("{}\n", pick);
    return 0;
  }
  std::int64_t n = 0;
  try {
    std::size_t used = 0;
    n = std::stoll(mode, &used);
    if (used != mode.size()) n = 0;
  } catch (const std::exception&) {}
  if (n < 16 || n > 8192) {
    fmt::print(stderr, "workbook_blas_probe: N must be a whole number from 16 to 8192, or --kernels, or --choose\n");
    return 2;
  }
  return probe(n);
}
