#pragma once
/// \file
/// \brief Exercise 11: causal attention whose memory grows with seq, not seq².

#include <torch/types.h>

#include <cstdint>

namespace exercises {

//! [contract]
/// Causal attention, softmax(q kᵀ / sqrt(head_dim) + causal mask) v, with q, k, v float32
/// [batch, heads, seq, head_dim] (k and v as long as q), computed over blocks of `block` keys at a
/// time with a running maximum and a running sum per query row (the online softmax of
/// FlashAttention), so that no [seq, seq] tensor is ever allocated: the largest intermediate is
/// [batch, heads, seq, block], and every intermediate is float32 like the inputs (the checks
/// measure allocations in bytes). Query i attends to keys 0..i (itself included). Lesson 11 showed
/// what naive attention and SDPA's math path allocate; the checks profile your function's memory.
/// seq may be 0: the result is then empty, of q's shape and on q's device; it is below 2^24 (positions are
/// exact in float32 too). batch, heads and head_dim may be 0 as well (an empty result of q's shape). With
/// grad on and inputs that require grad the result is differentiable, as a training step needs:
/// backward reaches q, k and v with the naive attention's gradients. Each call computes from the
/// values its inputs hold then. A NaN in q or k gives NaN where that formula does (a query that
/// sees a NaN score), and numbers everywhere else. Throws std::invalid_argument when block < 1.
torch::Tensor tiled_causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                     std::int64_t block);
//! [contract]

}  // namespace exercises
