#pragma once
/// \file
/// \brief The articles' GeGLU MLP without biases, as lessons 08 and 09 train it:
/// down(gelu_tanh(gate(x)) * up(x)).

#include <torch/nn/functional/activation.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

namespace workbook {

/// The GeGLU MLP block: three bias-free projections, dim -> hidden (gate, up) -> dim (down).
struct GegluImpl : torch::nn::Module {
  /// Registers gate and up ([hidden, dim] weights) and down ([dim, hidden]).
  GegluImpl(std::int64_t dim, std::int64_t hidden) {
    namespace nn = torch::nn;
    gate = register_module("gate", nn::Linear(nn::LinearOptions(dim, hidden).bias(false)));
    up = register_module("up", nn::Linear(nn::LinearOptions(dim, hidden).bias(false)));
    down = register_module("down", nn::Linear(nn::LinearOptions(hidden, dim).bias(false)));
  }
  /// down(gelu_tanh(gate(x)) * up(x)).
  torch::Tensor forward(const torch::Tensor& x) {
    return down->forward(torch::gelu(gate->forward(x), "tanh") * up->forward(x));
  }
  torch::nn::Linear gate{nullptr};  ///< dim -> hidden, through gelu
  torch::nn::Linear up{nullptr};    ///< dim -> hidden, the multiplier
  torch::nn::Linear down{nullptr};  ///< hidden -> dim
};
/// Geglu, the module holder of GegluImpl (a shared pointer to it, as torch::nn::Linear is to LinearImpl).
TORCH_MODULE(Geglu);

/// Clears the gradients as Optimizer::zero_grad does, in either form: LibTorch 1.13 zeroes in place,
/// 2.x sets to none by default (torch/optim/optimizer.h); lessons show both on any version.
inline void zero_grad(torch::nn::Module& model, bool set_to_none) {
  for (auto& p : model.parameters()) {
    if (!p.grad().defined()) continue;
    if (set_to_none) {
      p.mutable_grad() = torch::Tensor();
    } else {
      p.mutable_grad().detach_();
      p.mutable_grad().zero_();
    }
  }
}

}  // namespace workbook
