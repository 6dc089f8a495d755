// Exercise 05 — see 05_mlp.h for the contract, `./workbook hint 5` for a hint.
// Until you write them, the functions below throw "not implemented yet" and the checks fail.
#include "05_mlp.h"

#include "workbook/not_implemented.h"

namespace exercises {

GeGLUImpl::GeGLUImpl(std::int64_t dim, std::int64_t hidden) {
  // TODO: gate = register_module("gate", torch::nn::Linear(torch::nn::LinearOptions(dim, hidden).bias(false)));
  // and likewise up (dim -> hidden) and down (hidden -> dim).
  (void)dim, (void)hidden;
  throw workbook::NotImplemented("exercise 05: GeGLUImpl's constructor (exercises/05_mlp.cpp)");
}

torch::Tensor GeGLUImpl::forward(const torch::Tensor& x) {
  // TODO: the four stages, each inside a workbook::Region; torch::gelu(g, "tanh").
  (void)x;
  throw workbook::NotImplemented("exercise 05: GeGLUImpl::forward (exercises/05_mlp.cpp)");
}

PlainMLPImpl::PlainMLPImpl(std::int64_t dim, std::int64_t hidden) {
  // TODO: register fc1 (dim -> hidden), fc2 (hidden -> hidden), fc3 (hidden -> dim), with bias.
  (void)dim, (void)hidden;
  throw workbook::NotImplemented("exercise 05: PlainMLPImpl's constructor (exercises/05_mlp.cpp)");
}

torch::Tensor PlainMLPImpl::forward(const torch::Tensor& x) {
  // TODO: fc3(relu(fc2(relu(fc1(x))))).
  (void)x;
  throw workbook::NotImplemented("exercise 05: PlainMLPImpl::forward (exercises/05_mlp.cpp)");
}

}  // namespace exercises
