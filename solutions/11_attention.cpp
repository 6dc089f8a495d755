// Reference solution of exercise 11.
//
// What to notice: the scores of one block of keys, [batch, heads, seq, block], are all that is ever
// materialised. Each block's exponentials are taken against the running maximum, and what was
// accumulated so far (the sum and the weighted values) is rescaled by exp(old max - new max)
// whenever the maximum grows: the result is exact, not an approximation. Key 0 is visible to every
// query, so after the first block no row's maximum is -inf and no 0/0 appears.
#include "11_attention.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace exercises {

torch::Tensor tiled_causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                     std::int64_t block) {
  if (block < 1) throw std::invalid_argument("block must be at least 1");
  const std::int64_t seq = q.size(2);
  // No keys: the formula itself on empty tensors (nothing to tile, nothing allocated), so that the
  // result is on autograd's graph of q, k and v, as the naive attention's is.
  if (seq == 0) return torch::matmul(torch::softmax(torch::matmul(q, k.transpose(-2, -1)), -1), v);
  const double scale = 1.0 / std::sqrt(double(q.size(3)));
  const double minus_infinity = -std::numeric_limits<double>::infinity();
  const torch::Tensor query_index = torch::arange(seq, q.options().dtype(torch::kLong)).view({seq, 1});
  torch::Tensor running_max = torch::full({q.size(0), q.size(1), seq, 1}, minus_infinity, q.options());
  torch::Tensor running_sum = torch::zeros({q.size(0), q.size(1), seq, 1}, q.options());
  torch::Tensor out = torch::zeros_like(q);
  for (std::int64_t start = 0; start < seq; start += block) {
    const std::int64_t width = std::min(block, seq - start);
    const torch::Tensor k_block = k.narrow(2, start, width), v_block = v.narrow(2, start, width);
    torch::Tensor scores = torch::matmul(q, k_block.transpose(-2, -1)) * scale;  // [B, H, seq, width]
    const torch::Tensor key_index = torch::arange(start, start + width, query_index.options()).view({1, width});
    scores.masked_fill_(key_index > query_index, minus_infinity);  // keys after the query
    const torch::Tensor new_max = torch::maximum(running_max, std::get<0>(scores.max(-1, /*keepdim=*/true)));
    const torch::Tensor rescale = torch::exp(running_max - new_max);  // 0 on the first block
    const torch::Tensor weights = torch::exp(scores - new_max);
    running_sum = running_sum * rescale + weights.sum(-1, /*keepdim=*/true);
    out = out * rescale + torch::matmul(weights, v_block);
    running_max = new_max;
  }
  return out / running_sum;
}

}  // namespace exercises
