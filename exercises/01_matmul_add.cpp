// Exercise 01 — see 01_matmul_add.h for the contract, `./workbook hint 1` for a hint.
// Until you write it, the function below throws "not implemented yet" and the checks fail.
#include "01_matmul_add.h"

#include "workbook/lesson/not_implemented.h"
#include "workbook/profiler/region.h"

namespace exercises {

std::vector<CycleGaps> profile_cycles(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                                      const workbook::Schedule& schedule, const std::filesystem::path& dir) {
  // TODO: a session whose options carry an on_trace_ready callback; the loop over the schedule's
  // steps; per cycle, the trace file and the gaps.
  (void)x, (void)w, (void)b, (void)schedule, (void)dir;
  throw workbook::NotImplemented("exercise 01: profile_cycles (exercises/01_matmul_add.cpp)");
}

}  // namespace exercises
