// Checks of exercise 05: the modules' shapes and parameters, and what one forward runs.
#include "workbook_doctest.h"

#include <functional>

#include "05_mlp.h"
#include "record_forwards.h"

namespace {

constexpr std::int64_t dim = 32, hidden = 64;

// Three recorded forwards, each inside an "mlp_forward" region.
workbook::Profile record(const std::function<torch::Tensor()>& forward) {
  workbook::SessionOptions options;
  options.with_flops = true;
  return testing::record_forwards("mlp_forward", [&] { forward(); }, options);
}

std::size_t gemms_under(const workbook::Profile& p, workbook::EventId id) {
  return p.count_under(id, "aten::mm") + p.count_under(id, "aten::addmm") + p.count_under(id, "aten::bmm");
}

}  // namespace

TEST_CASE("GeGLU: shapes, registered submodules, 3 dim x hidden weights and no bias") {
  exercises::GeGLU mlp(dim, hidden);
  const auto y = mlp->forward(torch::randn({2, 5, dim}));
  CHECK(y.sizes() == torch::IntArrayRef{2, 5, dim});
  std::int64_t count = 0;
  for (const auto& p : mlp->parameters()) count += p.numel();
  CHECK(count == 3 * dim * hidden);
  const auto children = mlp->named_children();
  CHECK(children.size() == 3);
  CHECK(children.contains("gate"));
  CHECK(children.contains("up"));
  CHECK(children.contains("down"));
  CHECK(mlp->gate->weight.sizes() == torch::IntArrayRef{hidden, dim});
  CHECK(mlp->down->weight.sizes() == torch::IntArrayRef{dim, hidden});
}

TEST_CASE("GeGLU computes down(gelu_tanh(gate(x)) * up(x))") {
  exercises::GeGLU mlp(dim, hidden);
  const auto x = torch::randn({4, dim});
  const auto expected = torch::mm(torch::gelu(torch::mm(x, mlp->gate->weight.t()), "tanh") *
                                      torch::mm(x, mlp->up->weight.t()),
                                  mlp->down->weight.t());
  CHECK(torch::allclose(mlp->forward(x), expected, 1e-4, 1e-5));
}

TEST_CASE("one GeGLU forward: 3 GEMMs, 1 gelu, 1 mul, in regions nested as declared") {
  exercises::GeGLU mlp(dim, hidden);
  const auto x = torch::randn({2, 8, dim});
  const workbook::Profile p = record([&] { return mlp->forward(x); });
  const auto forwards = p.find("mlp_forward");
  REQUIRE(forwards.size() == 3);
  for (auto f : forwards) {
    CHECK(gemms_under(p, f) == 3);
    CHECK(p.count_under(f, "aten::gelu") == 1);
    CHECK(p.count_under(f, "aten::mul") == 1);
    for (const char* stage : {"gate_proj", "up_proj", "act_mul", "down_proj"}) {
      CAPTURE(stage);
      const auto under = p.under(f, stage);
      REQUIRE(under.size() == 1);
      CHECK(p[*p.parent(under[0])].name == "mlp_forward");
    }
    CHECK(gemms_under(p, p.under(f, "gate_proj").at(0)) == 1);
    CHECK(p.count_under(p.under(f, "act_mul").at(0), "aten::gelu") == 1);
  }
  // The stages run in order.
  const auto f = forwards.front();
  CHECK(p[p.under(f, "gate_proj").at(0)].start_ns < p[p.under(f, "up_proj").at(0)].start_ns);
  CHECK(p[p.under(f, "act_mul").at(0)].start_ns < p[p.under(f, "down_proj").at(0)].start_ns);
}

TEST_CASE("plain MLP: biased Linears, 3 addmm and 2 relu per forward") {
  exercises::PlainMLP mlp(dim, hidden);
  std::int64_t count = 0;
  for (const auto& p : mlp->parameters()) count += p.numel();
  CHECK(count == dim * hidden + hidden + hidden * hidden + hidden + hidden * dim + dim);
  const auto x = torch::randn({16, dim});
  CHECK(mlp->forward(x).sizes() == torch::IntArrayRef{16, dim});
  const workbook::Profile p = record([&] { return mlp->forward(x); });
  for (auto f : p.find("mlp_forward")) {
    CHECK(p.count_under(f, "aten::addmm") == 3);
    CHECK(p.count_under(f, "aten::relu") == 2);
  }
}
