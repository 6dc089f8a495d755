// Checks of exercise 06: no aten::t per call, same values as eager, and guards that hold.
#include "workbook_doctest.h"

#include "06_compile.h"
#include "workbook/session.h"

using workbook::GuardPolicy;

namespace {

torch::nn::Linear make_linear() {
  torch::manual_seed(7);
  return torch::nn::Linear(32, 64);
}

}  // namespace

TEST_CASE("compiled forward: same values as eager, one addmm and no aten::t per call") {
  auto linear = make_linear();
  const auto x = torch::randn({16, 32});
  exercises::CompiledLinear compiled(linear, x, GuardPolicy::raise);
  CHECK(torch::allclose(compiled.forward(x), linear->forward(x), 1e-5, 1e-5));
  workbook::Session session;
  for (int i = 0; i < 3; ++i) {
    torch::Tensor y = compiled.forward(x);
    session.step();
  }
  const auto p = session.finish();
  CHECK(p.count("aten::addmm") == 3);
  CHECK(p.count("aten::t") == 0);
  CHECK(p.count("aten::transpose") == 0);
  const auto other = torch::randn({5, 32});  // a new batch size is fine: no guard on it
  CHECK(torch::allclose(compiled.forward(other), linear->forward(other), 1e-5, 1e-5));
}

TEST_CASE("under raise, each broken guard is named") {
  auto linear = make_linear();
  exercises::CompiledLinear compiled(linear, torch::randn({16, 32}), GuardPolicy::raise);
  CHECK_THROWS_WITH_AS(compiled.forward(torch::randn({32, 16}).t()), doctest::Contains("'strides'"),
                       workbook::GuardFailure);
  CHECK_THROWS_WITH_AS(compiled.forward(torch::randn({16, 32}, torch::kDouble)), doctest::Contains("'dtype'"),
                       workbook::GuardFailure);
  CHECK_THROWS_WITH_AS(compiled.forward(torch::randn({16, 16})), doctest::Contains("'trailing size'"),
                       workbook::GuardFailure);
  CHECK(compiled.recompilations() == 0);
}

TEST_CASE("under recompile, a new layout recompiles once and gives the right answer") {
  auto linear = make_linear();
  exercises::CompiledLinear compiled(linear, torch::randn({16, 32}), GuardPolicy::recompile);
  const auto transposed = torch::randn({32, 16}).t();
  CHECK(torch::allclose(compiled.forward(transposed), linear->forward(transposed), 1e-5, 1e-5));
  CHECK(compiled.recompilations() == 1);
  CHECK(torch::allclose(compiled.forward(transposed), linear->forward(transposed), 1e-5, 1e-5));
  CHECK(compiled.recompilations() == 1);
}

TEST_CASE("an in-place weight update is not missed") {
  auto linear = make_linear();
  const auto x = torch::randn({16, 32});
  exercises::CompiledLinear compiled(linear, x, GuardPolicy::recompile);
  compiled.forward(x);
  {
    torch::NoGradGuard no_grad;
    linear->weight.mul_(2);
  }
  CHECK(torch::allclose(compiled.forward(x), linear->forward(x), 1e-5, 1e-5));
  CHECK(compiled.recompilations() == 1);
  exercises::CompiledLinear strict(linear, x, GuardPolicy::raise);
  {
    torch::NoGradGuard no_grad;
    linear->weight.add_(1);
  }
  CHECK_THROWS_WITH_AS(strict.forward(x), doctest::Contains("'weight version'"), workbook::GuardFailure);
}
