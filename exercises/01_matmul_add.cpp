// Exercise 01 — see 01_matmul_add.h for the contract, `./workbook hint 1` for a hint.
// Until you write them, the functions below throw "not implemented yet" and the checks fail.
#include "01_matmul_add.h"

#include "workbook/not_implemented.h"
#include "workbook/region.h"

namespace exercises {

workbook::Profile profile_matmul_add(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                                     const workbook::Schedule& schedule) {
  // TODO: open a workbook::Session with `schedule`, run schedule.total_steps() steps that each
  // compute torch::add(torch::matmul(x, w), b) inside a workbook::Region("matmul_add") and end
  // with session.step(), then return session.finish().
  (void)x, (void)w, (void)b, (void)schedule;
  throw workbook::NotImplemented("exercise 01: profile_matmul_add (exercises/01_matmul_add.cpp)");
}

}  // namespace exercises
