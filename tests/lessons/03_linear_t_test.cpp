// Checks of exercise 03 on real tensors and real profiles of nn::Linear.
#include "workbook_doctest.h"

#include <torch/nn/modules/linear.h>

#include <algorithm>

#include "03_linear_t.h"
#include "workbook/region.h"
#include "workbook/session.h"

namespace {

struct Recorded {
  workbook::Profile profile;
  std::int64_t weight_bytes = 0;
};

// Profiles, per step, a Linear forward and an explicit copy of its transposed weight.
Recorded record(std::int64_t in, std::int64_t out, int active = 3) {
  const std::int64_t batch = 64;
  torch::manual_seed(3);
  torch::nn::Linear linear(in, out);
  const auto x = torch::randn({batch, in});
  workbook::SessionOptions options;
  options.profile_memory = true;
  const workbook::Schedule schedule(1, 1, active);
  workbook::Session session(schedule, options);
  for (int step = 0; step < schedule.total_steps(); ++step) {
    {
      workbook::Region region("linear_forward");
      torch::Tensor y = linear->forward(x);
    }
    {
      workbook::Region region("transpose_copy");
      torch::Tensor wt = linear->weight.t().contiguous();
    }
    session.step();
  }
  return {session.finish(), in * out * std::int64_t(sizeof(float))};
}

const Recorded& small() {
  static const Recorded r = record(32, 64);
  return r;
}

// The fastest call: the least disturbed by whatever else the machine was doing.
double fastest_us(const workbook::Profile& p, const std::vector<workbook::EventId>& ids) {
  double best = 1e300;
  for (auto id : ids) best = std::min(best, double(p.total_ns(id)) / 1e3);
  return ids.empty() ? 0.0 : best;
}

}  // namespace

TEST_CASE("W and W.t() share storage; sizes and strides are swapped") {
  const auto w = torch::randn({64, 32});
  const auto wt = w.t();
  const auto a = exercises::view_facts(w), b = exercises::view_facts(wt);
  CHECK(a.sizes == std::vector<std::int64_t>{64, 32});
  CHECK(a.strides == std::vector<std::int64_t>{32, 1});
  CHECK(b.sizes == std::vector<std::int64_t>{32, 64});
  CHECK(b.strides == std::vector<std::int64_t>{1, 32});
  CHECK(a.data == b.data);
  CHECK(a.contiguous);
  CHECK_FALSE(b.contiguous);
  CHECK(exercises::same_storage(w, wt));
  const auto copy = wt.contiguous();
  CHECK_FALSE(exercises::same_storage(w, copy));
  CHECK(exercises::view_facts(copy).strides == std::vector<std::int64_t>{64, 1});
  CHECK(exercises::view_facts(w.narrow(0, 2, 3)).storage_offset == 64);
}

TEST_CASE("the Linear forward runs aten::t -> aten::transpose -> aten::as_strided, then aten::addmm") {
  const workbook::Profile& p = small().profile;
  const auto regions = p.find("linear_forward");
  REQUIRE(regions.size() == 3);
  for (auto r : regions) {
    CHECK(p.has_chain(r, {"aten::t", "aten::transpose", "aten::as_strided"}));
    CHECK(p.count_under(r, "aten::addmm") == 1);
    CHECK(p.count_under(r, "aten::add") == 0);  // the bias is added inside addmm
  }
}

TEST_CASE("aten::t is metadata-only; the contiguous copy is not") {
  const workbook::Profile& p = small().profile;
  const auto bytes = small().weight_bytes;
  for (auto r : p.find("linear_forward"))
    for (auto t : p.under(r, "aten::t")) CHECK(exercises::is_metadata_only(p, t, bytes));
  for (auto r : p.find("transpose_copy")) {
    const auto copies = p.under(r, "aten::contiguous");
    REQUIRE(copies.size() == 1);
    CHECK_FALSE(exercises::is_metadata_only(p, copies[0], bytes));
  }
}

TEST_CASE("the predicate looks at what is beneath the op, not at its name") {
  workbook::Event t, alloc;
  t.name = "aten::t";
  t.end_ns = 100;
  alloc.name = "[memory]";
  alloc.category = workbook::Category::memory;
  alloc.start_ns = alloc.end_ns = 50;
  alloc.bytes = 4096;
  const workbook::Profile p({t, alloc});
  CHECK_FALSE(exercises::is_metadata_only(p, 0, 4096));
  CHECK(exercises::is_metadata_only(p, 0, 8192));
}

TEST_CASE("aten::t costs the same for a large matrix; the copy grows with it") {
  const Recorded few = record(32, 64, 10), large = record(1024, 1024, 10);
  const workbook::Profile &ps = few.profile, &pl = large.profile;
  const double t_small = fastest_us(ps, ps.find("aten::t")), t_large = fastest_us(pl, pl.find("aten::t"));
  const double copy_small = fastest_us(ps, ps.find("aten::contiguous"));
  const double copy_large = fastest_us(pl, pl.find("aten::contiguous"));
  CAPTURE(t_small);
  CAPTURE(t_large);
  CAPTURE(copy_small);
  CAPTURE(copy_large);
  // 512x more elements: the view's cost stays flat, the copy's grows a lot. The bounds are
  // generous because a loaded machine (a CI neighbour) stretches every short event: the view
  // must stay within a few microseconds of its small-matrix cost and far below the large copy.
  CHECK(t_large < 5 * t_small + 50.0);
  CHECK(t_large * 10 < copy_large);
  CHECK(copy_large > 20 * copy_small);
  for (auto t : pl.find("aten::t")) CHECK(exercises::is_metadata_only(pl, t, large.weight_bytes));
}
