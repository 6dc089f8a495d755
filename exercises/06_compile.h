#pragma once
/// \file
/// \brief Exercise 06: a compiled Linear — transpose-free, guarded, like torch.compile's.

#include <torch/nn/modules/linear.h>
#include <torch/types.h>

#include "workbook/compile.h"

namespace exercises {

//! [contract]
/// nn::Linear specialised for inputs like `example`, the way torch.compile specialises it: the
/// transposed weight is prepared once (keep the strided view w.t(): no copy, as compile's
/// generated code does) and every call runs one `aten::addmm` — no `aten::t` per call.
///
/// Every call first checks the guards (workbook::Guards over the input and the weight). When one
/// fails: under GuardPolicy::raise, throw the workbook::GuardFailure naming it; under
/// GuardPolicy::recompile, specialise again for this input and count a recompilation.
class CompiledLinear {
 public:
  CompiledLinear(torch::nn::Linear linear, const torch::Tensor& example, workbook::GuardPolicy policy);
  /// y = x W^T + b, the same values as linear->forward(x).
  torch::Tensor forward(const torch::Tensor& x);
  /// How many times a failed guard led to specialising again.
  int recompilations() const { return recompilations_; }

 private:
  void specialise(const torch::Tensor& example);

  torch::nn::Linear linear_;
  workbook::GuardPolicy policy_;
  workbook::Guards guards_;
  torch::Tensor weight_t_;  ///< the prepared transposed weight
  int recompilations_ = 0;
};
//! [contract]

}  // namespace exercises
