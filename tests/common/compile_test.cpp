// Guards and the fused elementwise kernel.
#include "workbook_doctest.h"

#include "workbook/compile.h"
#include "workbook/session.h"

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

TEST_CASE("guards name what changed") {
  const auto w = torch::randn({4, 8});
  const auto x = torch::randn({2, 8});
  const Guards guards(x, {w});
  CHECK(guards.first_failure(torch::randn({3, 8}), {w}).empty());  // the batch may change
  CHECK(guards.first_failure(x.to(torch::kDouble), {w}) == "dtype");
  CHECK(guards.first_failure(torch::randn({2, 2, 8}), {w}) == "rank");
  CHECK(guards.first_failure(torch::randn({2, 4}), {w}) == "trailing size");
  CHECK(guards.first_failure(torch::randn({8, 8}).t(), {w}) == "strides");
  CHECK(guards.first_failure(x, {torch::randn({4, 8})}) == "weight version");
  auto updated = w.clone();
  const Guards on_copy(x, {updated});
  updated.mul_(2);
  CHECK(on_copy.first_failure(x, {updated}) == "weight version");
  CHECK_THROWS_WITH_AS(guards.check(x.to(torch::kDouble), {w}), doctest::Contains("guard 'dtype' failed"),
                       workbook::GuardFailure);
}
