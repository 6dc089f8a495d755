// Reference solution of exercise 05.
#include "05_mlp.h"

#include "workbook/region.h"

namespace exercises {

namespace nn = torch::nn;

GeGLUImpl::GeGLUImpl(std::int64_t dim, std::int64_t hidden)
    : gate(register_module("gate", nn::Linear(nn::LinearOptions(dim, hidden).bias(false)))),
      up(register_module("up", nn::Linear(nn::LinearOptions(dim, hidden).bias(false)))),
      down(register_module("down", nn::Linear(nn::LinearOptions(hidden, dim).bias(false)))) {}

torch::Tensor GeGLUImpl::forward(const torch::Tensor& x) {
  torch::Tensor g, u, h;
  {
    workbook::Region region("gate_proj");
    g = gate->forward(x);
  }
  {
    workbook::Region region("up_proj");
    u = up->forward(x);
  }
  {
    workbook::Region region("act_mul");
    h = torch::gelu(g, "tanh") * u;
  }
  workbook::Region region("down_proj");
  return down->forward(h);
}

PlainMLPImpl::PlainMLPImpl(std::int64_t dim, std::int64_t hidden)
    : fc1(register_module("fc1", nn::Linear(dim, hidden))),
      fc2(register_module("fc2", nn::Linear(hidden, hidden))),
      fc3(register_module("fc3", nn::Linear(hidden, dim))) {}

torch::Tensor PlainMLPImpl::forward(const torch::Tensor& x) {
  return fc3->forward(torch::relu(fc2->forward(torch::relu(fc1->forward(x)))));
}

}  // namespace exercises
