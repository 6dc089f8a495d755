// Exercise 06 — see 06_compile.h for the contract, `./workbook hint 6` for a hint.
// Until you write them, the functions below throw "not implemented yet" and the checks fail.
#include "06_compile.h"

#include "workbook/not_implemented.h"

namespace exercises {

CompiledLinear::CompiledLinear(torch::nn::Linear linear, const torch::Tensor& example, workbook::GuardPolicy policy)
    : linear_(std::move(linear)), policy_(policy) {
  // TODO: specialise for the example.
  (void)example;
  throw workbook::NotImplemented("exercise 06: CompiledLinear's constructor (exercises/06_compile.cpp)");
}

void CompiledLinear::specialise(const torch::Tensor& example) {
  // TODO: record the guards (workbook::Guards(example, {weight})) and prepare the transposed weight once.
  (void)example;
  throw workbook::NotImplemented("exercise 06: CompiledLinear::specialise (exercises/06_compile.cpp)");
}

torch::Tensor CompiledLinear::forward(const torch::Tensor& x) {
  // TODO: check the guards (raise or recompile), then one torch::addmm with the prepared weight.
  (void)x;
  throw workbook::NotImplemented("exercise 06: CompiledLinear::forward (exercises/06_compile.cpp)");
}

}  // namespace exercises
