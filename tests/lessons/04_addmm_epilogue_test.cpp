// Checks of exercise 04 on real profiles: one fused op against mm + add.
#include "workbook_doctest.h"

#include <functional>

#include "04_addmm_epilogue.h"
#include "record_forwards.h"

namespace {

constexpr std::int64_t M = 256, K = 64, N = 128;

struct Inputs {
  torch::Tensor x, w, b;
};

const Inputs& inputs() {
  static const Inputs in = [] {
    torch::manual_seed(4);
    return Inputs{torch::randn({M, K}), torch::randn({N, K}), torch::randn({N})};
  }();
  return in;
}

torch::Tensor unfused(const Inputs& in) { return torch::add(torch::mm(in.x, in.w.t()), in.b); }

// Three recorded forwards, each in a "forward" region, with memory profiling.
workbook::Profile record(const std::function<torch::Tensor()>& forward) {
  workbook::SessionOptions options;
  options.profile_memory = true;
  return testing::record_forwards("forward", [&] { forward(); }, options);
}

// Allocations of at least one [M, N] float buffer beneath an event.
int output_sized_allocations(const workbook::Profile& p, workbook::EventId id) {
  int count = 0;
  for (auto d : p.descendants(id))
    count += p[d].category == workbook::Category::memory && p[d].bytes >= M * N * std::int64_t(sizeof(float));
  return count;
}

}  // namespace

TEST_CASE("the fused forward computes x w^T + b") {
  const auto& in = inputs();
  const torch::Tensor y = exercises::fused_linear(in.x, in.w, in.b);
  CHECK(y.sizes() == torch::IntArrayRef{M, N});
  CHECK(torch::allclose(y, unfused(in), 1e-4, 1e-4));
  const auto x2 = torch::randn({3, 5}), w2 = torch::randn({7, 5}), b2 = torch::randn({7});
  CHECK(torch::allclose(exercises::fused_linear(x2, w2, b2), torch::add(torch::mm(x2, w2.t()), b2), 1e-5, 1e-5));
}

TEST_CASE("fused: one aten::addmm per forward and no aten::add") {
  const auto& in = inputs();
  const workbook::Profile p = record([&] { return exercises::fused_linear(in.x, in.w, in.b); });
  const auto forwards = p.find("forward");
  REQUIRE(forwards.size() == 3);
  for (auto f : forwards) {
    CHECK(p.count_under(f, "aten::addmm") == 1);
    CHECK(p.count_under(f, "aten::add") == 0);
    CHECK(p.count_under(f, "aten::mm") == 0);
  }
}

TEST_CASE("unfused: mm then add, and one more output-sized buffer than fused") {
  const auto& in = inputs();
  const workbook::Profile fused = record([&] { return exercises::fused_linear(in.x, in.w, in.b); });
  const workbook::Profile split = record([&] { return unfused(in); });
  for (auto f : split.find("forward")) {
    CHECK(split.count_under(f, "aten::mm") == 1);
    CHECK(split.count_under(f, "aten::add") == 1);
  }
  const auto f0 = fused.find("forward").at(0), s0 = split.find("forward").at(0);
  CHECK(output_sized_allocations(split, s0) == output_sized_allocations(fused, f0) + 1);
}

TEST_CASE("the extra pass's traffic") {
  CHECK(exercises::extra_add_traffic_bytes(4, 8, 4) == (32 + 32 + 8) * 4);
  CHECK(exercises::extra_add_traffic_bytes(8192, 256, 2) == (2 * 8192 * 256 + 256) * 2);
}
