#pragma once
/// \file
/// \brief Exercise 04: the bias lives in the GEMM — write the fused forward, count what the
/// unfused one costs.

#include <torch/types.h>

#include <cstdint>

namespace exercises {

//! [contract]
/// y = x w^T + b as one op, the way nn::Linear does it: aten::addmm. On a GPU (cuBLASLt) the bias
/// is added in the GEMM's epilogue; on the CPU addmm copies the broadcast bias into the output and
/// lets the BLAS accumulate onto it (beta = 1) — still one op and no separate add. The profile of
/// one call must show exactly one aten::addmm and no aten::add.
/// x: [M, K], w: [N, K] (nn::Linear's layout), b: [N]; returns [M, N].
torch::Tensor fused_linear(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b);

/// Bytes the unfused path's separate add moves through memory for an [M, N] output: it reads
/// the GEMM's output (M·N), writes the result (M·N) and reads the bias (N), each element
/// `element_size` bytes. (What a GPU epilogue saves; the CPU's addmm moves as many bytes in its
/// bias copy and beta = 1 accumulation, and saves an allocation and a separate loop instead.)
std::int64_t extra_add_traffic_bytes(std::int64_t m, std::int64_t n, std::int64_t element_size);
//! [contract]

}  // namespace exercises
