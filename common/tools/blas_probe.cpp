// `workbook_blas_probe [N]`: a BLAS self-test and speed probe, run as a child process with the
// OPENBLAS_CORETYPE to be tried, so that a kernel that crashes or computes wrong results cannot
// take the caller down. Prints one line: "ok|bad <GFLOP/s> <max relative error> <core>", exit
// 0 only when the results match a float64 reference.
#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <torch/types.h>

#include <chrono>
#include <string>

#include "workbook/machine.h"

int main(int argc, char** argv) {
  const std::int64_t n = argc > 1 ? std::stoll(argv[1]) : 2048;
  if (n < 16 || n > 8192) {
    fmt::print(stderr, "workbook_blas_probe: N must be between 16 and 8192\n");
    return 2;
  }
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
