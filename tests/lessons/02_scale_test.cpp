// Checks of exercise 02: on synthetic profiles with known answers, then on real runs.
#include "workbook_doctest.h"

#include <ATen/Parallel.h>

#include <stdexcept>

#include "02_scale.h"
#include "record_forwards.h"
#include "synthetic_events.h"

using exercises::Regime;
using testing::make_event;
using workbook::Category;

namespace {

// Two recorded steps of 100 us; in each, mm has 30 us of self time and add 10 us.
workbook::Profile synthetic_cpu() {
  std::vector<workbook::Event> events;
  for (std::int64_t base : {0, 200000}) {
    events.push_back(make_event("ProfilerStep#2", base, base + 100000, Category::user_annotation));
    events.push_back(make_event("aten::matmul", base + 10000, base + 50000));
    events.push_back(make_event("aten::mm", base + 15000, base + 45000));
    events.push_back(make_event("aten::add", base + 60000, base + 70000));
  }
  return workbook::Profile(events);
}

workbook::Profile profile_at(std::int64_t n, int active = 10) {
  torch::manual_seed(2);
  const auto x = torch::randn({n, n}), w = torch::randn({n, n}), b = torch::randn({n});
  return testing::record_forwards("matmul_add", [&] { torch::add(torch::matmul(x, w), b); }, {}, active);
}

}  // namespace

TEST_CASE("breakdown of a synthetic CPU profile: compute is the step beyond the fixed cost") {
  const auto b = exercises::breakdown(synthetic_cpu(), 70.0);
  CHECK(exercises::mean_step_us(synthetic_cpu()) == doctest::Approx(100));
  CHECK(b.step_us == doctest::Approx(100));
  CHECK(b.ops_self_us == doctest::Approx(40));
  CHECK(b.compute_us == doctest::Approx(30));
  CHECK(b.overhead_us == doctest::Approx(70));
  CHECK(b.busy_fraction == doctest::Approx(0.3));
  CHECK(exercises::classify(b) == Regime::overhead_bound);
  // A fixed cost above the step leaves no compute, never a negative one.
  CHECK(exercises::breakdown(synthetic_cpu(), 150.0).compute_us == doctest::Approx(0));
  CHECK(exercises::step_flops(100) == doctest::Approx(2.01e6));
}

TEST_CASE("with kernels, compute is their union, overlaps counted once") {
  std::vector<workbook::Event> events{make_event("ProfilerStep#2", 0, 100000, Category::user_annotation),
                                      make_event("aten::mm", 1000, 90000)};
  for (auto [start, end] : {std::pair<std::int64_t, std::int64_t>{10000, 50000}, {40000, 70000}, {80000, 85000}}) {
    auto k = make_event("kernel", start, end, Category::kernel, 7);
    k.device_type = workbook::DeviceType::cuda;
    events.push_back(k);
  }
  const auto b = exercises::breakdown(workbook::Profile(events), 99.0);
  CHECK(b.compute_us == doctest::Approx(65));
  CHECK(b.busy_fraction == doctest::Approx(0.65));
  CHECK(exercises::classify(b) == Regime::compute_bound);
}

TEST_CASE("classification threshold and GFLOP/s arithmetic") {
  exercises::StepBreakdown half;
  half.step_us = 10;
  half.compute_us = 5;
  half.busy_fraction = 0.5;
  CHECK(exercises::classify(half) == Regime::compute_bound);
  half.busy_fraction = 0.49;
  CHECK(exercises::classify(half) == Regime::overhead_bound);
  exercises::StepBreakdown one_ms;
  one_ms.step_us = 1000;
  CHECK(exercises::achieved_gflops(100, one_ms) == doctest::Approx((2e6 + 1e4) / 1e6));
}

TEST_CASE("a profile without steps is an error, not a division by zero") {
  const workbook::Profile no_steps({make_event("aten::mm", 0, 10)});
  CHECK_THROWS_AS(exercises::mean_step_us(no_steps), std::invalid_argument);
  CHECK_THROWS_AS(exercises::breakdown(no_steps, 1.0), std::invalid_argument);
}

TEST_CASE("on this machine: small is overhead-bound, large is compute-bound") {
  at::set_num_threads(1);  // one intra-op thread: OpenMP workers then cannot contend with OpenBLAS's
  profile_at(16);          // the first profile of a process pays one-time costs
  const double fixed_cost = exercises::mean_step_us(profile_at(16));
  CAPTURE(fixed_cost);
  // Ten steps a run, and the quieter of two runs: a busy neighbour must not make 16 look busy.
  auto small = exercises::breakdown(profile_at(16), fixed_cost);
  const auto again = exercises::breakdown(profile_at(16), fixed_cost);
  if (again.step_us < small.step_us) small = again;
  const auto large = exercises::breakdown(profile_at(512, 3), fixed_cost);
  CAPTURE(small.busy_fraction);
  CAPTURE(large.busy_fraction);
  CHECK(large.busy_fraction > small.busy_fraction + 0.3);
  CHECK(exercises::classify(small) == Regime::overhead_bound);
  CHECK(exercises::classify(large) == Regime::compute_bound);
  for (const auto& b : {small, large}) {
    CHECK(b.step_us > 0);
    CHECK(b.ops_self_us > 0);
    CHECK(b.ops_self_us < b.step_us);
    CHECK(b.overhead_us == doctest::Approx(b.step_us - b.compute_us));
  }
  const double gflops = exercises::achieved_gflops(512, large);
  CHECK(gflops > 0);
  CHECK(gflops < 100000);  // no 2-core CPU does 100 TFLOP/s
  CHECK(gflops > exercises::achieved_gflops(16, small));
}
