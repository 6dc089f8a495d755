// Guards and the fused elementwise kernel.
#include "workbook_doctest.h"

#include "workbook/profiler/session.h"
#include "workbook/support/compile.h"

using workbook::Guards;

TEST_CASE("fused_gelu_mul equals gelu_tanh(a) * b on several shapes, and falls back when it must") {
  torch::manual_seed(6);
  for (auto shape : std::vector<std::vector<std::int64_t>>{{1}, {7}, {33, 17}, {4, 64, 129}, {100000}}) {
    CAPTURE(shape.size());
    const auto a = torch::randn(shape) * 3, b = torch::randn(shape);
    CHECK(torch::allclose(workbook::fused_gelu_mul(a, b), torch::gelu(a, "tanh") * b, 1e-5, 1e-5));
  }
  const auto a = torch::randn({16, 8}), b = torch::randn({8, 16});
  CHECK(torch::allclose(workbook::fused_gelu_mul(a, b.t()), torch::gelu(a, "tanh") * b.t(), 1e-5, 1e-5));
  const auto d = torch::randn({5}, torch::kDouble);
  CHECK(torch::allclose(workbook::fused_gelu_mul(d, d), torch::gelu(d, "tanh") * d));
}

TEST_CASE("the fused kernel is one op in the profile") {
  const auto a = torch::randn({64, 64}), b = torch::randn({64, 64});
  workbook::Session session;
  torch::Tensor y = workbook::fused_gelu_mul(a, b);
  session.step();
  const auto p = session.finish();
  REQUIRE(p.count("workbook::fused_gelu_mul") == 1);
  CHECK(p.count("aten::gelu") == 0);
  CHECK(p.count("aten::mul") == 0);
  CHECK(p[p.find("workbook::fused_gelu_mul")[0]].category == workbook::Category::cpu_op);
}

TEST_CASE("guards name what changed: metadata and identity, never values") {
  const auto w = torch::randn({4, 8});
  const auto x = torch::randn({2, 8});
  const Guards guards(x, {w});
  CHECK(guards.first_failure(x.clone(), {w}).empty());
  CHECK(guards.first_failure(torch::randn({3, 8}), {w}) == "size");  // static until a recompile marks it dynamic
  CHECK(guards.failed_size_dim(torch::randn({3, 8})) == 0);
  CHECK(guards.first_failure(x.to(torch::kDouble), {w}) == "dtype");
  CHECK(guards.first_failure(torch::randn({2, 2, 8}), {w}) == "rank");
  CHECK(guards.first_failure(torch::randn({8, 2}).t(), {w}) == "strides");
  CHECK(guards.first_failure(x, {torch::randn({4, 8})}) == "weight identity");  // another tensor object
  auto updated = w.clone();
  const Guards on_copy(x, {updated});
  updated.mul_(2);  // an optimizer step: in place, same object
  CHECK(on_copy.first_failure(x, {updated}).empty());
  const Guards dynamic_batch(x, {w}, {true, false});
  CHECK(dynamic_batch.first_failure(torch::randn({7, 8}), {w}).empty());
  CHECK_THROWS_WITH_AS(guards.check(x.to(torch::kDouble), {w}), doctest::Contains("guard 'dtype' failed"),
                       workbook::GuardFailure);
  // Dynamo's global-state guard: grad mode. Tensors are built here with grad on, guarded with it off.
  const auto without_grad = [&] {
    torch::NoGradGuard no_grad;
    return Guards(x, {w});
  }();
  CHECK(without_grad.first_failure(x, {w}) == "grad mode");
  CHECK_THROWS_WITH_AS(without_grad.check(x, {w}), doctest::Contains("specialised with grad mode off"),
                       workbook::GuardFailure);
}

TEST_CASE("requires_grad is guarded: a weight frozen when an entry was compiled, unfrozen later, recompiles") {
  // A w.t() prepared from a frozen weight has no grad_fn and stays a leaf once the weight is
  // unfrozen (its version never moved): a gradient would land in the view, not in the weight.
  const auto w = torch::randn({4, 8}), x = torch::randn({2, 8});
  const Guards frozen(x, {w});
  w.requires_grad_(true);
  CHECK(frozen.first_failure(x, {w}) == "requires_grad");
  CHECK_THROWS_WITH_AS(frozen.check(x, {w}), doctest::Contains("specialised for requires_grad [0, 0]"),
                       workbook::GuardFailure);
  const Guards unfrozen(x, {w});
  CHECK(unfrozen.first_failure(x, {w}).empty());
  CHECK(unfrozen.first_failure(x.clone().requires_grad_(), {w}) == "requires_grad");  // the input's too
}

TEST_CASE("while autograd records, fused_gelu_mul runs the differentiable ops: gradients flow") {
  torch::manual_seed(8);
  const auto a = (torch::randn({6, 5}) * 3).requires_grad_(), b = torch::randn({6, 5}).requires_grad_();
  workbook::Session session;
  workbook::fused_gelu_mul(a, b).sum().backward();
  session.step();
  const auto p = session.finish();
  const auto a_eager = a.detach().clone().requires_grad_(), b_eager = b.detach().clone().requires_grad_();
  (torch::gelu(a_eager, "tanh") * b_eager).sum().backward();
  CHECK(torch::allclose(a.grad(), a_eager.grad(), 1e-5, 1e-5));
  CHECK(torch::allclose(b.grad(), b_eager.grad(), 1e-5, 1e-5));
  const auto fused = p.find("workbook::fused_gelu_mul");
  REQUIRE(fused.size() == 1);
  CHECK(p.count_under(fused[0], "aten::gelu") == 1);  // named as the kernel, recorded as what ran
}

TEST_CASE("the cache: a size change compiles once with that dimension dynamic; limit; fail_on_recompile") {
  const auto w = torch::randn({4, 8});
  workbook::SpecialisationCache cache;
  CHECK(cache.lookup(torch::randn({2, 8}), {w}) == std::optional<std::size_t>(0));
  CHECK(cache.lookup(torch::randn({2, 8}), {w}) == std::optional<std::size_t>(0));
  CHECK(cache.lookup(torch::randn({5, 8}), {w}) == std::optional<std::size_t>(1));
  CHECK(cache.last_reason() == "size of dim 0 changed, now dynamic");
  CHECK(cache.lookup(torch::randn({9, 8}), {w}) == std::optional<std::size_t>(1));
  CHECK(cache.recompilations() == 1);
  workbook::CacheOptions small;
  small.cache_size_limit = 1;
  small.warn_at_limit = false;  // reached on purpose
  workbook::SpecialisationCache full(small);
  full.lookup(torch::randn({2, 8}), {w});
  CHECK(!full.lookup(torch::randn({2, 8}).to(torch::kDouble), {w}));
  CHECK(full.eager_fallbacks() == 1);
  workbook::CacheOptions strict;
  strict.stance = workbook::RecompileStance::fail_on_recompile;
  workbook::SpecialisationCache no_recompiles(strict);
  no_recompiles.lookup(torch::randn({2, 8}), {w});
  CHECK_THROWS_WITH_AS(no_recompiles.lookup(torch::randn({3, 8}), {w}), doctest::Contains("guard 'size' failed"),
                       workbook::GuardFailure);
}

TEST_CASE("the vectorised kernel: within 1e-6 of eager where eager is accurate, closer to exact where it is not") {
  torch::manual_seed(7);
  const auto a = torch::linspace(-10, 10, 1 << 20), b = torch::randn({1 << 20});
  const auto ours = workbook::fused_gelu_mul(a, b).to(torch::kDouble),
             eager = (torch::gelu(a, "tanh") * b).to(torch::kDouble);
  // The exact value in float64, as x sigmoid(2u): torch's float64 gelu cancels too, below x = -7.
  const auto x = a.to(torch::kDouble), u = 0.7978845608028654 * (x + 0.044715 * x.pow(3));
  const auto exact = x * b.to(torch::kDouble) / (1 + torch::exp(-2 * u));
  auto largest_relative = [&](const torch::Tensor& t, const torch::Tensor& ref, const torch::Tensor& where) {
    return ((t - ref).abs() / ref.abs()).masked_select(where).max().item<double>();
  };
  const auto normal = exact.abs() > 1e-30;
  // Eager's float formula 0.5 x (1 + tanh(u)) cancels for negative x (1e-5 off at x = -3, 1e-3 at
  // -4): compared with eager only where eager is itself within 3e-7 of exact.
  const double vs_eager = largest_relative(ours, eager, (a >= -1).logical_and(normal));
  const double vs_exact = largest_relative(ours, exact, (a >= -3).logical_and(normal));
  // Below x = -3 the float argument's rounding, amplified by |2u| in e^(-2u), bounds any float kernel.
  const auto tail = (a < -3).logical_and(normal);
  const double tail_ours = largest_relative(ours, exact, tail), tail_eager = largest_relative(eager, exact, tail);
  CAPTURE(vs_eager);
  CAPTURE(vs_exact);
  CAPTURE(tail_ours);
  CAPTURE(tail_eager);
  CHECK(vs_eager <= 1e-6);
  CHECK(vs_exact <= 1.5e-6);  // a few float ulp
  CHECK(tail_ours <= 2e-5);
  CHECK(tail_ours < tail_eager);
}
