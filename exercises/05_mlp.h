#pragma once
/// \file
/// \brief Exercise 05: the articles' MLP blocks as torch::nn modules, with a region per stage.

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/types.h>

#include <cstdint>

namespace exercises {

//! [contract]
/// The articles' GeGLU block: down(gelu_tanh(gate(x)) * up(x)), three Linear layers without
/// bias. gate and up map dim -> hidden, down maps hidden -> dim; all three are registered
/// submodules named "gate", "up" and "down".
struct GeGLUImpl : torch::nn::Module {
  GeGLUImpl(std::int64_t dim, std::int64_t hidden);
  /// x: [..., dim] -> [..., dim]. Each stage runs in a workbook::Region: "gate_proj", "up_proj",
  /// "act_mul" (the tanh-approximated GELU of gate times up) and "down_proj".
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Linear gate{nullptr}, up{nullptr}, down{nullptr};
};
TORCH_MODULE(GeGLU);

/// The plain block: Linear -> ReLU -> Linear -> ReLU -> Linear, all with bias: dim -> hidden ->
/// hidden -> dim. Registered submodules "fc1", "fc2", "fc3".
struct PlainMLPImpl : torch::nn::Module {
  PlainMLPImpl(std::int64_t dim, std::int64_t hidden);
  /// x: [batch, dim] -> [batch, dim].
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};
TORCH_MODULE(PlainMLP);
//! [contract]

}  // namespace exercises
