#pragma once
/// \file
/// \brief Exercise 04: keep the bias in the GEMM when the input has a batch and a sequence.

#include <torch/types.h>

namespace exercises {

//! [contract]
/// y = x Wᵀ + b for a 3-D input x: [B, S, D] (B or S may be 0; D >= 1), W: [N, D] (nn::Linear's
/// layout), b: [N]; returns [B, S, N], equal to torch::nn::functional::linear(x, W, b), gradients
/// included: with an nn::Linear's parameters (they require grad) backward reaches W and b as it does
/// through F::linear; with nothing requiring grad the result is still an ordinary tensor, as
/// F::linear's (a frozen layer's output feeds a trainable one).
///
/// Lesson 04 fused the bias into a 2-D GEMM. C++'s nn::Linear on a 3-D input does not: it runs
/// aten::matmul and then adds the bias in a separate aten::add_ over the whole output. Write it so
/// the profile of one call shows exactly one aten::addmm, no aten::add or aten::add_, no copy of
/// x or of W (W's transpose is a view: addmm reads it as the BLAS's transposed operand), and exactly
/// one allocation the size of the output: the 3-D result must be a view of the
/// GEMM's 2-D output, contiguous like F::linear's result (row-major [B, S, N]). x is contiguous;
/// W and b may be strided views (read as they are: a copy of either is a copy too).
torch::Tensor linear_3d(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b);
//! [contract]

}  // namespace exercises
