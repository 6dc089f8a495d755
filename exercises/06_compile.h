#pragma once
/// \file
/// \brief Exercise 06: compile the GeGLU MLP the way torch.compile would — and keep it compiled.

#include <torch/nn/modules/linear.h>
#include <torch/types.h>

#include <vector>

#include "workbook/support/compile.h"

namespace exercises {

//! [contract]
/// The articles' GeGLU block, down(gelu_tanh(gate(x)) * up(x)) with three bias-free Linears,
/// compiled: each call runs three bare `aten::mm` on prepared transposed weights (views, no
/// `aten::t` per call) and one `workbook::fused_gelu_mul`. Lesson 06 compiles a single Linear;
/// here there are three weights, and the code must stay right while a training loop runs: with
/// grad on, a backward through forward (a compiled entry or the eager fallback) gives all three
/// weights eager's gradients.
///
/// Specialisations live in a workbook::SpecialisationCache guarded over grad mode, the input
/// (Dynamo's rules for the input) and the identity of all three weights (ours: Dynamo >= 2.5 guards a parameter's
/// identity only under freezing; see lesson 06 and workbook/support/compile.h). Each entry needs its own prepared weights.
/// Past the cache's size limit a call runs eager: x·Wᵀ for each weight as the modules hold it now (as the
/// Linears compute it), torch::gelu, the multiply — never an entry's prepared weights;
/// a weight may be any [out, in] tensor, a strided view too (read it by its strides, as the Linear does).
/// With grad off the output is an ordinary tensor, as eager's under torch::NoGradGuard: never an
/// inference tensor (c10::InferenceMode), which autograd refuses to save when it is used later with grad on;
/// under the fail_on_recompile stance a miss throws the workbook::GuardFailure.
class CompiledGegluMlp {
 public:
  CompiledGegluMlp(torch::nn::Linear gate, torch::nn::Linear up, torch::nn::Linear down,
                   workbook::CacheOptions options = {});
  /// The MLP's output for `x` of shape [batch, in_features] (2-D: the three aten::mm take
  /// matrices), equal to the eager forward's (1e-4).
  torch::Tensor forward(const torch::Tensor& x);
  /// Specialisations compiled so far.
  std::size_t entries() const;
  /// Calls that ran eager because the cache was full.
  int eager_fallbacks() const;

 private:
  torch::nn::Linear gate_, up_, down_;
  workbook::SpecialisationCache cache_;
  std::vector<std::vector<torch::Tensor>> prepared_;  ///< per entry: the transposed weights
};
//! [contract]

}  // namespace exercises
