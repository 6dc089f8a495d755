// Exercise 06 — see 06_compile.h for the contract, `./workbook hint 6` for a hint.
// Until you write them, the functions below throw "not implemented yet" and the checks fail.
#include "06_compile.h"

#include "workbook/lesson/not_implemented.h"

namespace exercises {

CompiledGegluMlp::CompiledGegluMlp(torch::nn::Linear gate, torch::nn::Linear up, torch::nn::Linear down,
                                   workbook::CacheOptions options)
    : gate_(std::move(gate)), up_(std::move(up)), down_(std::move(down)), cache_(options) {}

torch::Tensor CompiledGegluMlp::forward(const torch::Tensor& x) {
  // TODO: ask the cache which entry fits this call (or none: eager); give a new entry its own
  // prepared weights; run the compiled form.
  (void)x;
  throw workbook::NotImplemented("exercise 06: CompiledGegluMlp::forward (exercises/06_compile.cpp)");
}

std::size_t CompiledGegluMlp::entries() const {
  throw workbook::NotImplemented("exercise 06: CompiledGegluMlp::entries (exercises/06_compile.cpp)");
}

int CompiledGegluMlp::eager_fallbacks() const {
  throw workbook::NotImplemented("exercise 06: CompiledGegluMlp::eager_fallbacks (exercises/06_compile.cpp)");
}

}  // namespace exercises
