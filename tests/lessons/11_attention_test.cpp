// Checks of exercise 11: tiled causal attention equals the naive one, sees no later key, survives
// large scores, and its memory, read from the profiler, grows with seq rather than seq².
#include "workbook_doctest.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "11_attention.h"
#include "floating_outputs_observer.h"
#include "record_forwards.h"
#include "workbook/profiler/memory_timeline.h"

using testing::all_close;

namespace {

// softmax(q kᵀ / sqrt(d) with later keys masked) v, all at once: the [seq, seq] way.
torch::Tensor naive_causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  const std::int64_t seq = q.size(2);
  const torch::Tensor later = torch::ones({seq, seq}, torch::kBool).triu(1);
  const torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(double(q.size(3)));
  return torch::matmul(torch::softmax(scores.masked_fill(later, -INFINITY), -1), v);
}

struct Qkv {
  torch::Tensor q, k, v;
};

Qkv random_qkv(std::int64_t batch, std::int64_t heads, std::int64_t seq, std::int64_t head_dim) {
  torch::manual_seed(11);
  return {torch::randn({batch, heads, seq, head_dim}), torch::randn({batch, heads, seq, head_dim}),
          torch::randn({batch, heads, seq, head_dim})};
}

// One recorded call's memory: the largest single allocation and the peak above the bytes live
// when the call began.
struct CallMemory {
  std::int64_t largest_allocation = 0, peak_above_start = 0;
  std::size_t sdpa_ops = 0;
  std::int64_t widest_softmax_keys = 0;  // the most keys one aten::softmax normalises over (its last dim)
  // The GEMMs: a scores GEMM contracts over head_dim (q kᵀ, or k qᵀ), a weighted-values GEMM over
  // keys (weights v, or vᵀ weightsᵀ). Either way its (query, key) pairs are its outer dims times
  // its contracted dim over head_dim: the FLOPs over 2 head_dim.
  std::size_t score_gemms = 0, value_gemms = 0;
  std::int64_t score_pairs = 0, value_pairs = 0;  // (query, key) pairs summed over those GEMMs
  std::int64_t widest_value_keys = 0;             // the most keys one weighted-values GEMM sums over
};

CallMemory record_call(const Qkv& x, std::int64_t block, bool grad_on = false, bool with_backward = false) {
  // Inference by default; with grad_on autograd records the call (a training step's forward), and
  // with_backward runs the backward inside the region too (a training step's both halves).
  std::optional<torch::NoGradGuard> no_grad;
  if (!grad_on) no_grad.emplace();
  workbook::SessionOptions options;
  options.profile_memory = true;
  options.record_shapes = true;
  const workbook::Profile p = testing::record_forwards(
      "attention",
      [&] {
        torch::Tensor out = exercises::tiled_causal_attention(x.q, x.k, x.v, block);
        if (with_backward) out.backward(torch::ones_like(out));
      },
      options, 1);
  CallMemory m;
  const auto region = p[p.find("attention").at(0)];
  for (workbook::EventId d : p.descendants(p.find("attention").at(0))) {
    const auto& e = p[d];
    if (e.category == workbook::Category::memory) m.largest_allocation = std::max(m.largest_allocation, e.bytes);
    // mm and bmm multiply inputs 0 and 1; addmm and baddbmm (a rescale fused in) inputs 1 and 2.
    const bool plain = e.name == "aten::bmm" || e.name == "aten::mm";
    const bool fused = e.name == "aten::baddbmm" || e.name == "aten::addmm";
    const std::size_t first = fused ? 1 : 0;
    if ((plain || fused) && e.input_shapes.size() >= first + 2 && e.input_shapes[first].size() >= 2 &&
        e.input_shapes[first + 1].size() >= 2) {
      const auto& a = e.input_shapes[first];
      const auto& b = e.input_shapes[first + 1];
      const std::int64_t rows = a[a.size() - 2], contracted = a.back(), columns = b.back();
      const std::int64_t head_dim = x.q.size(-1);
      const bool scores = contracted == head_dim;
      (scores ? m.score_gemms : m.value_gemms) += 1;
      (scores ? m.score_pairs : m.value_pairs) += rows * columns * contracted / head_dim;
      if (!scores) m.widest_value_keys = std::max(m.widest_value_keys, contracted);
    }
    m.sdpa_ops += e.name.find("scaled_dot_product") != std::string::npos;
    if ((e.name == "aten::softmax" || e.name == "aten::_softmax") && !e.input_shapes.empty() &&
        !e.input_shapes[0].empty())
      m.widest_softmax_keys = std::max(m.widest_softmax_keys, e.input_shapes[0].back());
  }
  const auto timeline = workbook::memory_timeline(p);
  m.peak_above_start = timeline.peak_between(region.start_ns, region.end_ns) - timeline.live_at(region.start_ns - 1);
  return m;
}

}  // namespace

TEST_CASE("equals softmax(q k^T / sqrt(d) + causal mask) v, whatever the block size") {
  torch::NoGradGuard no_grad;
  const Qkv x = random_qkv(2, 3, 50, 8);
  const torch::Tensor expected = naive_causal_attention(x.q, x.k, x.v);
  for (std::int64_t block : {1, 7, 16, 50, 64}) {  // 50 keys: blocks that do not divide it, and one past it
    CAPTURE(block);
    const torch::Tensor out = exercises::tiled_causal_attention(x.q, x.k, x.v, block);
    REQUIRE(out.sizes() == expected.sizes());
    CHECK(all_close(out, expected));
  }
}

TEST_CASE("any layout of [batch, heads, seq, head_dim]: a transposed view gives the same result") {
  torch::NoGradGuard no_grad;
  // Projections usually give [batch, seq, heads, head_dim], viewed as [batch, heads, seq, head_dim]
  // by a transpose: not contiguous, so view() cannot flatten it (reshape can).
  torch::manual_seed(11);
  const torch::Tensor q = torch::randn({2, 12, 3, 8}).transpose(1, 2), k = torch::randn({2, 12, 3, 8}).transpose(1, 2),
                      v = torch::randn({2, 12, 3, 8}).transpose(1, 2);
  REQUIRE_FALSE(q.is_contiguous());
  CHECK(all_close(exercises::tiled_causal_attention(q, k, v, 5), naive_causal_attention(q, k, v)));
}

TEST_CASE("causal: a query's output does not change when later keys and values do") {
  torch::NoGradGuard no_grad;
  const Qkv x = random_qkv(1, 2, 40, 8);
  const torch::Tensor before = exercises::tiled_causal_attention(x.q, x.k, x.v, 8);
  Qkv changed{x.q, x.k.clone(), x.v.clone()};
  changed.k.narrow(2, 21, 19).normal_();  // keys and values 21..39 replaced
  changed.v.narrow(2, 21, 19).normal_();
  const torch::Tensor after = exercises::tiled_causal_attention(changed.q, changed.k, changed.v, 8);
  CHECK(all_close(after.narrow(2, 0, 21), before.narrow(2, 0, 21)));  // queries 0..20 see none of them
  CHECK_FALSE(all_close(after.narrow(2, 21, 19), before.narrow(2, 21, 19)));
}

TEST_CASE("large scores stay finite: exponentials are taken against the running maximum") {
  torch::NoGradGuard no_grad;
  Qkv x = random_qkv(1, 2, 33, 16);
  x.q = x.q * 60;  // scores in the hundreds: exp() of them overflows float32
  const torch::Tensor out = exercises::tiled_causal_attention(x.q, x.k, x.v, 8);
  CHECK(torch::isfinite(out).all().item<bool>());
  CHECK(all_close(out, naive_causal_attention(x.q, x.k, x.v), 1e-3, 1e-3));
  // Every score far below zero: the running maximum starts at -inf, not at 0 (exp of a score
  // 200 below a maximum of 0 is 0 in float32, and the sum would be 0 too).
  const torch::Tensor q = -200 * torch::ones({1, 1, 2, 1}), k = torch::ones({1, 1, 2, 1});
  const torch::Tensor v = torch::tensor({1.0f, 3.0f}).view({1, 1, 2, 1});
  const torch::Tensor negative = exercises::tiled_causal_attention(q, k, v, 1);
  CHECK(torch::isfinite(negative).all().item<bool>());
  CHECK(all_close(negative, naive_causal_attention(q, k, v)));
  // Scores of -1e10: a masked key must count for nothing however low the real scores are, so the
  // mask is -inf, not a large negative number, and the running maximum starts at -inf too.
  // float32's lowest itself: a mask of numeric_limits<float>::lowest() ties with it (trial 19).
  for (const float scale : {-2e4f, -1e10f, -1e38f, std::numeric_limits<float>::lowest()}) {
    CAPTURE(scale);
    const torch::Tensor very_negative = exercises::tiled_causal_attention(scale * torch::ones({1, 1, 2, 1}), k, v, 1);
    CHECK(torch::isfinite(very_negative).all().item<bool>());
    // Query 0 sees only key 0 (value 1); query 1 sees both, equal scores: the mean, 2.
    CHECK(all_close(very_negative, torch::tensor({1.0f, 2.0f}).view({1, 1, 2, 1})));
  }
}

TEST_CASE("no [seq, seq] allocation: the profile's largest allocation is one block of scores") {
  // One head: a [seq, seq] tensor of any dtype, even a bool mask, is past one block's floats.
  // Two block sizes: the block is the caller's, not a tile size of the solution's own.
  // A short sequence too: the rule holds at every length, not only past some size.
  const std::int64_t batch = 1, heads = 1, head_dim = 32;
  for (const auto& [seq, block] :
       {std::pair<std::int64_t, std::int64_t>{1024, 64}, {1024, 16}, {100, 16}, {1024, 384}}) {
    CAPTURE(seq);
    CAPTURE(block);
    const CallMemory m = record_call(random_qkv(batch, heads, seq, head_dim), block);
    const std::int64_t block_bytes = 4 * batch * heads * seq * std::max(block, head_dim);
    const std::int64_t full_scores_bytes = 4 * batch * heads * seq * seq;
    INFO("largest allocation " << m.largest_allocation << " bytes; one block of scores is " << block_bytes
                               << ", the whole [seq, seq] matrix " << full_scores_bytes);
    CHECK(m.largest_allocation > 0);
    CHECK(m.largest_allocation <= block_bytes);
    // Written with LibTorch ops over blocks of keys, not handed to a fused kernel: no weighted-values
    // GEMM sums over more than one block of keys, and no softmax over whole rows runs (the online
    // softmax replaces it; one over a block's keys, merged by its log-sum-exp, is the same idea).
    // The queries may be tiled too, or skip the keys they cannot see.
    CHECK(m.sdpa_ops == 0);
    CHECK(m.score_gemms >= std::size_t((seq + block - 1) / block));
    CHECK(m.value_gemms >= std::size_t((seq + block - 1) / block));
    CHECK(m.widest_value_keys == std::min(block, seq));  // blocks of `block` keys: the caller's size
    CHECK(m.widest_softmax_keys <= std::min(block, seq));
    // One pass: each (query, key) score is computed once and weighs its value once, at most seq x
    // seq pairs each; never a second pass over the keys for the exact maximum.
    CHECK(m.score_pairs <= seq * seq);
    CHECK(m.value_pairs <= seq * seq);
  }
}

TEST_CASE("in training too: with grad on and inputs that require grad, no [seq, seq] allocation, backward included") {
  const std::int64_t seq = 1024, block = 64, head_dim = 32;
  Qkv x = random_qkv(1, 1, seq, head_dim);
  for (torch::Tensor* t : {&x.q, &x.k, &x.v}) t->requires_grad_(true);
  const CallMemory m = record_call(x, block, /*grad_on=*/true);
  const std::int64_t block_bytes = 4 * seq * std::max(block, head_dim);
  INFO("largest allocation " << m.largest_allocation << " bytes; one block of scores is " << block_bytes);
  CHECK(m.largest_allocation > 0);
  CHECK(m.largest_allocation <= block_bytes);
  CHECK(m.widest_softmax_keys <= block);
  // Backward too: "never" includes the gradients' way back (a custom backward that recomputes
  // the naive attention allocates the whole score matrix there).
  const CallMemory step = record_call(x, block, /*grad_on=*/true, /*with_backward=*/true);
  INFO("forward and backward: largest allocation " << step.largest_allocation << " bytes");
  CHECK(step.largest_allocation > 0);
  CHECK(step.largest_allocation <= block_bytes);
}

TEST_CASE("in training the result is differentiable: backward gives q, k and v the naive attention's gradients") {
  // Whichever inputs require grad: all three, only k and v (a frozen query projection), or one alone.
  for (const std::string requiring : {"qkv", "kv", "q", "k", "v"}) {
    CAPTURE(requiring);
    Qkv tiled = random_qkv(2, 2, 7, 4), naive = random_qkv(2, 2, 7, 4);
    for (Qkv* x : {&tiled, &naive}) {
      // A named array, not a braced list of make_pair temporaries: g++ 14 warns about the latter.
      const std::pair<char, torch::Tensor*> inputs[] = {{'q', &x->q}, {'k', &x->k}, {'v', &x->v}};
      for (const auto& [name, t] : inputs)
        if (requiring.find(name) != std::string::npos) t->requires_grad_(true);
    }
    const torch::Tensor out = exercises::tiled_causal_attention(tiled.q, tiled.k, tiled.v, 3);
    REQUIRE(out.requires_grad());
    const torch::Tensor upstream = torch::randn(out.sizes());
    out.backward(upstream);
    naive_causal_attention(naive.q, naive.k, naive.v).backward(upstream);
    for (const auto& [name, got, want] :
         {std::make_tuple('q', tiled.q.grad(), naive.q.grad()), std::make_tuple('k', tiled.k.grad(), naive.k.grad()),
          std::make_tuple('v', tiled.v.grad(), naive.v.grad())}) {
      CAPTURE(name);
      REQUIRE(got.defined() == want.defined());
      if (want.defined()) CHECK(all_close(got, want));
    }
  }
}

TEST_CASE("each call reads its inputs' values then: q changed in place gives a new result") {
  torch::NoGradGuard no_grad;
  const Qkv x = random_qkv(1, 2, 6, 4);
  (void)exercises::tiled_causal_attention(x.q, x.k, x.v, 2);
  x.q.mul_(-3);  // the same tensor, at the same address: new values
  CHECK(all_close(exercises::tiled_causal_attention(x.q, x.k, x.v, 2), naive_causal_attention(x.q, x.k, x.v)));
}

TEST_CASE("empty inputs that require grad give a result backward goes through, as the formula's does") {
  // An empty sequence, batch or head count, or heads of no width, in a training step: no values,
  // but the result is on autograd's graph, and backward hands q, k and v empty gradients of their shapes.
  for (const auto& shape : {std::vector<std::int64_t>{1, 2, 0, 8}, {0, 2, 5, 8}, {2, 0, 5, 8}, {1, 2, 5, 0}}) {
    CAPTURE(shape);
    const torch::Tensor q = torch::randn(shape, torch::requires_grad()),
                        k = torch::randn(shape, torch::requires_grad()),
                        v = torch::randn(shape, torch::requires_grad());
    const torch::Tensor out = exercises::tiled_causal_attention(q, k, v, 4);
    CHECK(out.sizes().vec() == shape);
    REQUIRE(out.requires_grad());
    REQUIRE_NOTHROW(out.sum().backward());
    for (const torch::Tensor& input : {q, k, v}) {
      REQUIRE(input.grad().defined());
      CHECK(input.grad().sizes().vec() == shape);
    }
  }
}

TEST_CASE("an empty batch or no heads is no error either: the result is empty, of q's shape") {
  torch::NoGradGuard no_grad;
  for (const auto& shape : {std::vector<std::int64_t>{0, 2, 5, 8}, {2, 0, 5, 8}, {0, 0, 0, 8}, {2, 2, 5, 0}}) {
    CAPTURE(shape);
    const torch::Tensor q = torch::randn(shape), k = torch::randn(shape), v = torch::randn(shape);
    const torch::Tensor out = exercises::tiled_causal_attention(q, k, v, 4);
    CHECK(out.sizes().vec() == shape);
    CHECK(std::string(c10::toString(out.scalar_type())) == "Float");
  }
}

TEST_CASE("every intermediate is float32 like the inputs, the running statistics too, with grad off or on") {
  // The allocation checks above see a float64 tensor only when it is the largest; the statistics
  // are [batch, heads, seq, 1] (trial 30 kept them in double and passed). Indices and masks are
  // not floating point and may be any type.
  for (const bool grad_on : {false, true}) {
    CAPTURE(grad_on);
    Qkv x = random_qkv(1, 2, 100, 16);
    if (grad_on)
      for (torch::Tensor* t : {&x.q, &x.k, &x.v}) t->requires_grad_(true);
    const torch::AutoGradMode mode(grad_on);
    const testing::FloatingOutputsObserver observer(torch::kFloat);
    const torch::Tensor out = exercises::tiled_causal_attention(x.q, x.k, x.v, 16);
    CHECK((out.scalar_type() == torch::kFloat));
    const std::set<std::string> others = observer.others();
    std::string listed;
    for (const auto& op : others) listed += " " + op;
    INFO("ops that returned another floating dtype:" << listed);
    CHECK(others.empty());
  }
}

TEST_CASE("the peak grows with seq, not seq^2: seq 1024 peaks at most 2.3x seq 512") {
  const CallMemory at_512 = record_call(random_qkv(1, 1, 512, 32), 64);
  const CallMemory at_1024 = record_call(random_qkv(1, 1, 1024, 32), 64);
  INFO("peak above the call's start: " << at_512.peak_above_start << " bytes at seq 512, " << at_1024.peak_above_start
                                       << " at 1024");
  REQUIRE(at_512.peak_above_start > 0);
  CHECK(double(at_1024.peak_above_start) <= 2.3 * double(at_512.peak_above_start));
}

TEST_CASE("any block of at least one key works, the largest one included: one block holds every key") {
  torch::NoGradGuard no_grad;
  const Qkv x = random_qkv(1, 2, 5, 4);
  const torch::Tensor expected = naive_causal_attention(x.q, x.k, x.v);
  for (std::int64_t block : {std::int64_t(5), std::int64_t(1) << 40, std::numeric_limits<std::int64_t>::max()}) {
    CAPTURE(block);
    CHECK(all_close(exercises::tiled_causal_attention(x.q, x.k, x.v, block), expected));
  }
}

TEST_CASE("an empty sequence is no error: the result is empty, of q's shape, on q's device") {
  torch::NoGradGuard no_grad;
  const Qkv x = random_qkv(1, 2, 0, 8);
  const torch::Tensor out = exercises::tiled_causal_attention(x.q, x.k, x.v, 4);
  CHECK((out.sizes() == x.q.sizes()));
  CHECK((out.scalar_type() == torch::kFloat));
  // Where q lives, too: an empty q on the meta device (shapes without data; no GPU needed) gives a
  // meta result, as a CUDA q must give a CUDA one (trial 30: torch::empty(q.sizes()) is on the CPU).
  const auto meta = torch::TensorOptions().dtype(torch::kFloat).device(torch::kMeta);
  const torch::Tensor q = torch::empty({1, 2, 0, 8}, meta), k = torch::empty({1, 2, 0, 8}, meta);
  const torch::Tensor on_meta = exercises::tiled_causal_attention(q, k, k, 4);
  CHECK((on_meta.device().type() == torch::kMeta));
  CHECK((on_meta.sizes() == q.sizes()));
}

TEST_CASE("a block smaller than one key is refused") {
  const Qkv x = random_qkv(1, 1, 4, 2);
  CHECK_THROWS_AS(exercises::tiled_causal_attention(x.q, x.k, x.v, 0), std::invalid_argument);
  CHECK_THROWS_AS(exercises::tiled_causal_attention(x.q, x.k, x.v, -1), std::invalid_argument);
  // Also where there is nothing to compute: the block is checked first, whatever the inputs.
  const Qkv empty = random_qkv(1, 1, 0, 2);
  CHECK_THROWS_AS(exercises::tiled_causal_attention(empty.q, empty.k, empty.v, 0), std::invalid_argument);
}

TEST_CASE("a NaN in q or k gives NaN wherever softmax(q k^T / sqrt(d) + causal mask) v gives it, and only there") {
  // A NaN score a query sees makes its whole softmax row NaN; a masked one is replaced by -inf
  // before the softmax and changes nothing. Guarding the division or masking NaN scores turns
  // those rows into numbers that no formula gave.
  torch::NoGradGuard no_grad;
  for (const bool in_q : {true, false}) {
    CAPTURE(in_q);
    Qkv x = random_qkv(1, 2, 9, 4);
    (in_q ? x.q : x.k)[0][1][2][0] = std::nan("");  // query 2 of head 1, or key 2 (seen by queries 2..8)
    const torch::Tensor expected = naive_causal_attention(x.q, x.k, x.v);
    REQUIRE(torch::isnan(expected).any().item<bool>());  // the test's premise
    for (std::int64_t block : {1, 4, 9}) {
      CAPTURE(block);
      const torch::Tensor out = exercises::tiled_causal_attention(x.q, x.k, x.v, block);
      REQUIRE(out.sizes() == expected.sizes());
      CHECK(torch::equal(torch::isnan(out), torch::isnan(expected)));
      const torch::Tensor numbers = ~torch::isnan(expected);
      CHECK(all_close(out.masked_select(numbers), expected.masked_select(numbers)));
    }
  }
}
