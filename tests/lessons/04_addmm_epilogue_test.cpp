// Checks of exercise 04 on real profiles: a 3-D Linear with the bias in the GEMM and no copies.
#include "workbook_doctest.h"

#include <torch/nn/functional/linear.h>

#include <cstring>
#include <utility>
#include <vector>

#include "04_addmm_epilogue.h"
#include "record_forwards.h"

namespace {

constexpr std::int64_t B = 4, S = 32, D = 48, N = 64;

struct Inputs {
  torch::Tensor x, w, b;
};

const Inputs& inputs() {
  static const Inputs in = [] {
    torch::manual_seed(4);
    return Inputs{torch::randn({B, S, D}), torch::randn({N, D}), torch::randn({N})};
  }();
  return in;
}

std::int64_t count_in(const workbook::Profile& p, workbook::EventId region, const char* name) {
  return std::int64_t(p.count_under(region, name));
}

// The allocations beneath a region (memory records with positive bytes): how many, how many bytes.
struct Allocations {
  std::int64_t count = 0, bytes = 0;
};
Allocations allocations_in(const workbook::Profile& p, workbook::EventId region) {
  Allocations a;
  for (auto d : p.descendants(region))
    if (p[d].category == workbook::Category::memory && p[d].bytes > 0) {
      ++a.count;
      a.bytes += p[d].bytes;
    }
  return a;
}

// One call's path: the bias inside one aten::addmm, never a separate add or a matmul.
void check_one_addmm_path(const workbook::Profile& p, workbook::EventId region) {
  CHECK(count_in(p, region, "aten::addmm") == 1);
  CHECK(count_in(p, region, "aten::add") == 0);
  CHECK(count_in(p, region, "aten::add_") == 0);
  CHECK(count_in(p, region, "aten::matmul") == 0);
}

// Three recorded "forward" calls, each: one addmm and no separate add, no copy of x, W or b (a
// copy_ only beneath addmm, its own bias broadcast on the CPU), one allocation: the float output.
void check_no_copy_one_allocation(const workbook::Profile& p) {
  const auto regions = p.find("forward");
  REQUIRE(regions.size() == 3);
  const std::int64_t out_bytes = B * S * N * std::int64_t(sizeof(float));
  for (auto r : regions) {
    check_one_addmm_path(p, r);
    CHECK(count_in(p, r, "aten::clone") == 0);
    std::int64_t copies_outside_addmm = count_in(p, r, "aten::copy_");
    for (auto mm : p.under(r, "aten::addmm")) copies_outside_addmm -= std::int64_t(p.count_under(mm, "aten::copy_"));
    CHECK(copies_outside_addmm == 0);
    const Allocations allocated = allocations_in(p, r);
    CHECK(allocated.count == 1);
    CHECK(allocated.bytes == out_bytes);
  }
}

}  // namespace

TEST_CASE("the values and the shape of nn::Linear's") {
  const auto& in = inputs();
  const auto y = exercises::linear_3d(in.x, in.w, in.b);
  CHECK(y.sizes().vec() == std::vector<std::int64_t>{B, S, N});
  CHECK(torch::allclose(y, torch::nn::functional::linear(in.x, in.w, in.b), 1e-4, 1e-4));
}

TEST_CASE("with an nn::Linear's parameters, backward reaches the weight and the bias as through F::linear") {
  // An out= op (addmm_out into a preallocated output) refuses autograd: a layer must not.
  torch::manual_seed(44);
  const auto x = torch::randn({2, 3, 8});
  // A hidden layer's input requires grad too: backward reaches it (a from_blob view of x would not).
  const torch::Tensor hidden = torch::randn({2, 3, 8}, torch::requires_grad());
  const torch::Tensor hidden_twin = hidden.detach().clone().requires_grad_();
  const torch::Tensor w_fixed = torch::randn({6, 8}), b_fixed = torch::randn({6});
  exercises::linear_3d(hidden, w_fixed, b_fixed).square().sum().backward();
  torch::nn::functional::linear(hidden_twin, w_fixed, b_fixed).square().sum().backward();
  REQUIRE(hidden.grad().defined());
  CHECK(torch::allclose(hidden.grad(), hidden_twin.grad(), 1e-4, 1e-4));
  const torch::Tensor w = torch::randn({6, 8}, torch::requires_grad()), b = torch::randn({6}, torch::requires_grad());
  const torch::Tensor w_twin = w.detach().clone().requires_grad_(), b_twin = b.detach().clone().requires_grad_();
  exercises::linear_3d(x, w, b).square().sum().backward();
  torch::nn::functional::linear(x, w_twin, b_twin).square().sum().backward();
  REQUIRE(w.grad().defined());
  REQUIRE(b.grad().defined());
  CHECK(torch::allclose(w.grad(), w_twin.grad(), 1e-4, 1e-4));
  CHECK(torch::allclose(b.grad(), b_twin.grad(), 1e-4, 1e-4));
  // The bias alone trained (x and W frozen, as in bias-only fine-tuning): backward reaches it (trial 45).
  const torch::Tensor b_only = torch::randn({6}, torch::requires_grad());
  const torch::Tensor b_only_twin = b_only.detach().clone().requires_grad_();
  exercises::linear_3d(x, w_fixed, b_only).square().sum().backward();
  torch::nn::functional::linear(x, w_fixed, b_only_twin).square().sum().backward();
  REQUIRE(b_only.grad().defined());
  CHECK(torch::allclose(b_only.grad(), b_only_twin.grad(), 1e-4, 1e-4));
}

TEST_CASE(
    "a frozen layer's output feeds a trainable one: an ordinary tensor, as F::linear's, never an inference tensor") {
  // Nothing requires grad here, so autograd records nothing; still the result is an ordinary tensor
  // (c10::InferenceMode's would refuse to be saved for the next layer's backward, or updated in place).
  torch::manual_seed(45);
  const torch::Tensor frozen_w = torch::randn({6, 8}), frozen_b = torch::randn({6});
  const torch::Tensor y = exercises::linear_3d(torch::randn({2, 3, 8}), frozen_w, frozen_b);
  CHECK_FALSE(y.is_inference());
  const torch::Tensor w = torch::randn({4, 6}, torch::requires_grad());
  CHECK_NOTHROW(torch::nn::functional::linear(y, w).sum().backward());
  CHECK(w.grad().defined());
}

TEST_CASE("an empty batch still reaches the weight and the bias: zero gradients, as through F::linear") {
  torch::manual_seed(46);
  const torch::Tensor w = torch::randn({6, 8}, torch::requires_grad()), b = torch::randn({6}, torch::requires_grad());
  const torch::Tensor y = exercises::linear_3d(torch::randn({0, 3, 8}), w, b);
  REQUIRE(y.requires_grad());
  y.sum().backward();
  REQUIRE(w.grad().defined());
  REQUIRE(b.grad().defined());
  CHECK(torch::equal(w.grad(), torch::zeros_like(w)));
  CHECK(torch::equal(b.grad(), torch::zeros_like(b)));
}

TEST_CASE("a weight changed in place, as an optimizer step does, gives the new result: nothing is cached") {
  torch::manual_seed(45);
  const auto x = torch::randn({2, 3, 8}), b = torch::randn({6});
  torch::Tensor w = torch::randn({6, 8});
  CHECK(torch::allclose(exercises::linear_3d(x, w, b), torch::nn::functional::linear(x, w, b), 1e-4, 1e-4));
  w.add_(1.0);  // same tensor, same data pointer, new values
  CHECK(torch::allclose(exercises::linear_3d(x, w, b), torch::nn::functional::linear(x, w, b), 1e-4, 1e-4));
}

TEST_CASE("two inputs at one address, of different shapes: each call reads its own input") {
  torch::manual_seed(46);
  const auto x = torch::randn({4, 3, 8}), w = torch::randn({6, 8}), b = torch::randn({6});
  const torch::Tensor first_row = x.narrow(0, 0, 1);  // same data pointer, shape [1, 3, 8]
  CHECK(torch::allclose(exercises::linear_3d(x, w, b), torch::nn::functional::linear(x, w, b), 1e-4, 1e-4));
  const torch::Tensor y = exercises::linear_3d(first_row, w, b);
  CHECK(y.sizes().vec() == std::vector<std::int64_t>{1, 3, 6});
  CHECK(torch::allclose(y, torch::nn::functional::linear(first_row, w, b), 1e-4, 1e-4));
}

TEST_CASE("a loader's buffer filled again: one address, one version, new values, and each call reads its own weight") {
  torch::manual_seed(47);
  const auto x = torch::randn({2, 3, 8}), b = torch::randn({6});
  const auto first = torch::randn({6, 8}), second = torch::randn({6, 8});
  std::vector<float> buffer(48);
  // Written behind the tensors' backs (as a loader does), so no version counter moves.
  std::memcpy(buffer.data(), first.data_ptr<float>(), buffer.size() * sizeof(float));
  const torch::Tensor w1 = torch::from_blob(buffer.data(), {6, 8});
  CHECK(torch::allclose(exercises::linear_3d(x, w1, b), torch::nn::functional::linear(x, first, b), 1e-4, 1e-4));
  std::memcpy(buffer.data(), second.data_ptr<float>(), buffer.size() * sizeof(float));
  const torch::Tensor w2 = torch::from_blob(buffer.data(), {6, 8});
  CHECK(torch::allclose(exercises::linear_3d(x, w2, b), torch::nn::functional::linear(x, second, b), 1e-4, 1e-4));
}

TEST_CASE("an empty batch or an empty sequence gives an empty result, as F::linear does") {
  const auto w = torch::randn({6, 8}), b = torch::randn({6});
  CHECK(exercises::linear_3d(torch::randn({0, 3, 8}), w, b).sizes().vec() == std::vector<std::int64_t>{0, 3, 6});
  // A -1 beside a 0 cannot be inferred: view({-1, S, N}) of the empty output throws.
  CHECK(exercises::linear_3d(torch::randn({2, 0, 8}), w, b).sizes().vec() == std::vector<std::int64_t>{2, 0, 6});
  // A layer of no outputs (W [0, D], b [0]) too: the result is [B, S, 0] (trial 45).
  CHECK(exercises::linear_3d(torch::randn({2, 3, 8}), torch::randn({0, 8}), torch::randn({0})).sizes().vec() ==
        std::vector<std::int64_t>{2, 3, 0});
  // Empty is still F::linear's result: its dtype too (an empty tensor made with default options is
  // float32 whatever came in).
  const auto wd = torch::randn({6, 8}, torch::kDouble), bd = torch::randn({6}, torch::kDouble);
  const auto empty = exercises::linear_3d(torch::randn({0, 3, 8}, torch::kDouble), wd, bd);
  CHECK((empty.scalar_type() == torch::kDouble));
  CHECK(empty.sizes().vec() == std::vector<std::int64_t>{0, 3, 6});
}

TEST_CASE("float64 in, float64 out: no conversion on the way") {
  torch::manual_seed(44);
  const auto x = torch::randn({2, 5, 8}, torch::kDouble), w = torch::randn({6, 8}, torch::kDouble),
             b = torch::randn({6}, torch::kDouble);
  const auto y = exercises::linear_3d(x, w, b);
  CHECK((y.scalar_type() == torch::kDouble));
  CHECK(torch::allclose(y, torch::nn::functional::linear(x, w, b), 1e-12, 1e-12));
}

TEST_CASE("bfloat16 in, bfloat16 out: the GEMM runs in bfloat16, with no cast of x, W or b") {
  // Casting to float32 and back gives close values, but the profile shows the casts: copies of x,
  // W and b and a second output.
  torch::manual_seed(45);
  const auto x = torch::randn({2, 5, 8}).to(torch::kBFloat16), w = torch::randn({6, 8}).to(torch::kBFloat16),
             b = torch::randn({6}).to(torch::kBFloat16);
  const auto y = exercises::linear_3d(x, w, b);
  CHECK(std::string(c10::toString(y.scalar_type())) == "BFloat16");
  CHECK(testing::all_close(y.to(torch::kFloat), torch::nn::functional::linear(x, w, b).to(torch::kFloat), 0.05, 0.1));
  workbook::SessionOptions options;
  options.profile_memory = true;
  const auto p = testing::record_forwards(
      "forward", [&] { exercises::linear_3d(x, w, b); }, options);
  const auto regions = p.find("forward");
  REQUIRE(regions.size() == 3);
  for (auto r : regions) {
    check_one_addmm_path(p, r);
    CHECK(count_in(p, r, "aten::to") == 0);
    CHECK(count_in(p, r, "aten::_to_copy") == 0);
    const Allocations allocated = allocations_in(p, r);
    CHECK(allocated.count == 1);
    CHECK(allocated.bytes == 2 * 5 * 6 * std::int64_t(sizeof(c10::BFloat16)));
  }
}

TEST_CASE("complex weights: the transpose of W, never its conjugate transpose") {
  // F::linear computes x Wᵀ + b in any dtype; Wᴴ (adjoint()) equals Wᵀ only for real W.
  torch::manual_seed(46);
  const auto x = torch::randn({2, 5, 8}, torch::kComplexFloat), w = torch::randn({6, 8}, torch::kComplexFloat),
             b = torch::randn({6}, torch::kComplexFloat);
  const auto y = exercises::linear_3d(x, w, b);
  CHECK(std::string(c10::toString(y.scalar_type())) == "ComplexFloat");
  CHECK(testing::all_close(y, torch::nn::functional::linear(x, w, b)));
}

TEST_CASE("per call: one addmm, no separate add, no copy of x or W, one output-sized allocation") {
  const auto& in = inputs();
  workbook::SessionOptions options;
  options.profile_memory = true;
  // W as nn::Linear holds it, and W a transposed view of a [D, N] buffer (the header promises a
  // contiguous x only): W.t() is then contiguous, and a W.contiguous() would copy (trial 31).
  const torch::Tensor w_as_view = in.w.t().contiguous().t();
  REQUIRE_FALSE(w_as_view.is_contiguous());
  // And b every other element of a [2N] buffer: addmm broadcasts a strided bias as it is, and a
  // b.contiguous() would copy it (trial 42).
  const torch::Tensor b_strided = torch::stack({in.b, torch::zeros_like(in.b)}, 1).select(1, 0);
  REQUIRE_FALSE(b_strided.is_contiguous());
  const std::pair<torch::Tensor, torch::Tensor> weights_and_biases[] = {
      {in.w, in.b}, {w_as_view, in.b}, {in.w, b_strided}};
  for (const auto& w_and_b : weights_and_biases) {
    const torch::Tensor &w = w_and_b.first, &b = w_and_b.second;  // named, for the lambda below (C++17)
    CAPTURE(w.is_contiguous());
    CAPTURE(b.is_contiguous());
    // Its values too: W's strides are its own (trial 32: an as_strided transpose that assumed a
    // contiguous W read the view's buffer in the wrong order).
    CHECK(torch::allclose(exercises::linear_3d(in.x, w, b), torch::nn::functional::linear(in.x, w, b), 1e-4, 1e-4));
    const auto p = testing::record_forwards(
        "forward", [&] { exercises::linear_3d(in.x, w, b); }, options);
    check_no_copy_one_allocation(p);
  }
}

TEST_CASE("with an nn::Linear's parameters (they require grad) the profile is the same: one addmm, no separate add") {
  const auto& in = inputs();
  const torch::Tensor w = in.w.clone().requires_grad_(true), b = in.b.clone().requires_grad_(true);
  workbook::SessionOptions options;
  options.profile_memory = true;
  // No copy of W for autograd's sake either: addmm saves the transposed view it read (trial 44).
  check_no_copy_one_allocation(testing::record_forwards(
      "forward", [&] { exercises::linear_3d(in.x, w, b); }, options));
}

TEST_CASE("the 3-D result is a view of the GEMM's output, not a copy of it") {
  const auto& in = inputs();
  const auto y = exercises::linear_3d(in.x, in.w, in.b);
  CHECK(y.is_contiguous());
  CHECK(y.storage().nbytes() == std::size_t(B * S * N) * sizeof(float));
  CHECK(y.storage_offset() == 0);
}

TEST_CASE("a batch or a sequence of one, or of none, takes the same path: one addmm, no separate add") {
  torch::manual_seed(14);
  const torch::Tensor w = torch::randn({N, D}), b = torch::randn({N});
  for (const auto& shape : {std::vector<std::int64_t>{1, S, D}, {B, 1, D}, {1, 1, D}, {0, S, D}, {B, 0, D}}) {
    CAPTURE(shape);
    const torch::Tensor x = torch::randn(shape);
    CHECK(testing::all_close(exercises::linear_3d(x, w, b), torch::nn::functional::linear(x, w, b)));
    const auto p = testing::record_forwards("forward", [&] { exercises::linear_3d(x, w, b); });
    for (auto r : p.find("forward")) {
      check_one_addmm_path(p, r);
    }
  }
}
