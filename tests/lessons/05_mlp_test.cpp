// Checks of exercise 05: the per-stage breakdown of real GeGLU forwards.
#include "workbook_doctest.h"

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include <array>
#include <stdexcept>
#include <utility>
#include <vector>

#include "05_mlp.h"
#include "record_forwards.h"
#include "synthetic_events.h"

namespace {

namespace nn = torch::nn;
// The synthetic profiles' vocabulary: events made by hand, the stages and forwards as regions.
using testing::make_event;
using workbook::Category;
constexpr auto region = Category::user_annotation;
constexpr std::int64_t T = 256, D = 128, H = 512;

// The articles' GeGLU block with a region per stage (the test's own, not the learner's).
struct GegluImpl : nn::Module {
  GegluImpl() {
    gate = register_module("gate", nn::Linear(nn::LinearOptions(D, H).bias(false)));
    up = register_module("up", nn::Linear(nn::LinearOptions(D, H).bias(false)));
    down = register_module("down", nn::Linear(nn::LinearOptions(H, D).bias(false)));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor g, u, h;
    {
      workbook::Region r("gate_proj");
      g = gate->forward(x);
    }
    {
      workbook::Region r("up_proj");
      u = up->forward(x);
    }
    {
      workbook::Region r("act_mul");
      h = torch::gelu(g, "tanh") * u;
    }
    workbook::Region r("down_proj");
    return down->forward(h);
  }
  nn::Linear gate{nullptr}, up{nullptr}, down{nullptr};
};
TORCH_MODULE(Geglu);

const workbook::Profile& recorded() {
  static const workbook::Profile p = [] {
    torch::manual_seed(5);
    Geglu mlp;
    const auto x = torch::randn({T, D});
    torch::NoGradGuard no_grad;
    return testing::record_forwards("mlp_forward", [&] { mlp->forward(x); });
  }();
  return p;
}

// The four stages of a synthetic profile, at 10 tokens, width 20 and hidden width 30 (sizes that
// matter only to the FLOPs).
std::vector<exercises::StageTime> stages_of(std::vector<workbook::Event> events) {
  auto s = exercises::stage_breakdown(workbook::Profile(std::move(events)), 10, 20, 30);
  REQUIRE(s.size() == 4);
  return s;
}

}  // namespace

TEST_CASE("four stages in order, with times that add up") {
  const auto& p = recorded();
  const auto stages = exercises::stage_breakdown(p, T, D, H);
  REQUIRE(stages.size() == 4);
  CHECK(stages[0].stage == "gate_proj");
  CHECK(stages[1].stage == "up_proj");
  CHECK(stages[2].stage == "act_mul");
  CHECK(stages[3].stage == "down_proj");
  double forward_us = 0, stages_us = 0;
  for (auto f : p.find("mlp_forward")) forward_us += double(p.total_ns(f)) / 1e3;
  forward_us /= double(p.find("mlp_forward").size());
  for (const auto& s : stages) {
    CAPTURE(s.stage);
    CHECK(s.total_us > 0);
    CHECK(s.self_us >= 0);
    CHECK(s.self_us < s.total_us);
    CHECK(s.gemm_us <= s.total_us);
    CHECK(s.gemm_share == doctest::Approx(s.gemm_us / s.total_us));
    stages_us += s.total_us;
  }
  CHECK(stages_us <= forward_us * 1.0001);
}

TEST_CASE("hand-counted FLOPs and the rate they imply") {
  const auto stages = exercises::stage_breakdown(recorded(), T, D, H);
  for (int k : {0, 1, 3}) {
    CAPTURE(stages[std::size_t(k)].stage);
    CHECK(stages[std::size_t(k)].flops == 2 * T * D * H);
    CHECK(stages[std::size_t(k)].gemm_us > 0);
    CHECK(stages[std::size_t(k)].gemm_gflops ==
          doctest::Approx(double(2 * T * D * H) / (stages[std::size_t(k)].gemm_us * 1e3)));
    // The GEMM time is what the profile says: the mean total of the stage's aten::mm per forward.
    const auto& p = recorded();
    double gemm_us = 0;
    for (auto f : p.find("mlp_forward"))
      for (auto region : p.under(f, stages[std::size_t(k)].stage))
        for (auto mm : p.under(region, "aten::mm")) gemm_us += double(p.total_ns(mm)) / 1e3;
    CHECK(stages[std::size_t(k)].gemm_us == doctest::Approx(gemm_us / double(p.find("mlp_forward").size())));
  }
  CHECK(stages[2].flops == 0);
  CHECK(stages[2].gemm_us == 0);
  CHECK(stages[2].gemm_gflops == 0);
}

TEST_CASE("exact numbers on a synthetic profile, and no forward is an error") {
  // One forward [0, 100] us: gate_proj [0, 30] with aten::mm [5, 25]; up_proj [30, 60] with
  // aten::mm [35, 55]; act_mul [60, 70]; down_proj [70, 100] with aten::mm [72, 97].
  const workbook::Profile p(
      {make_event("mlp_forward", 0, 100000, Category::user_annotation),
       make_event("gate_proj", 0, 30000, Category::user_annotation), make_event("aten::mm", 5000, 25000),
       make_event("up_proj", 30000, 60000, Category::user_annotation), make_event("aten::mm", 35000, 55000),
       make_event("act_mul", 60000, 70000, Category::user_annotation), make_event("aten::gelu", 61000, 64000),
       make_event("aten::mul", 65000, 69000), make_event("down_proj", 70000, 100000, Category::user_annotation),
       make_event("aten::mm", 72000, 97000)});
  const auto s = exercises::stage_breakdown(p, 10, 20, 30);
  CHECK(s[0].total_us == doctest::Approx(30));
  CHECK(s[0].self_us == doctest::Approx(10));
  CHECK(s[2].self_us == doctest::Approx(3));  // act_mul: 10 us less both children's 3 + 4
  CHECK(s[0].gemm_share == doctest::Approx(20.0 / 30.0));
  CHECK(s[3].gemm_us == doctest::Approx(25));
  CHECK(s[3].flops == 2 * 10 * 20 * 30);
  CHECK(s[3].gemm_gflops == doctest::Approx(12000.0 / 25e3));
  // Times keep their nanoseconds: a gate_proj of 1.5 us is not 1 us (trial 30: whole microseconds
  // everywhere above let an integer division pass).
  const workbook::Profile fine({make_event("mlp_forward", 0, 10000, Category::user_annotation),
                                make_event("gate_proj", 0, 1500, Category::user_annotation),
                                make_event("aten::mm", 100, 1350)});
  const auto f = exercises::stage_breakdown(fine, 10, 20, 30);
  CHECK(f[0].total_us == doctest::Approx(1.5));
  CHECK(f[0].self_us == doctest::Approx(0.25));
  CHECK(f[0].gemm_us == doctest::Approx(1.25));
  // Only aten::mm and aten::addmm, by their exact names, are the stage's GEMMs: an aten::bmm or an
  // in-place aten::addmm_ beneath down_proj is not (the contract names the two ops a Linear runs).
  const workbook::Profile with_bmm({make_event("mlp_forward", 0, 100000, Category::user_annotation),
                                    make_event("down_proj", 70000, 100000, Category::user_annotation),
                                    make_event("aten::mm", 72000, 90000), make_event("aten::bmm", 91000, 97000),
                                    make_event("aten::addmm_", 97500, 99000)});
  CHECK(exercises::stage_breakdown(with_bmm, 10, 20, 30)[3].gemm_us == doctest::Approx(18));
  // Self time subtracts every direct child, a region as much as an op: act_mul [60, 70] holding a
  // region gelu [61, 64] (its op beneath it) and aten::mul [65, 69] keeps 10 - 3 - 4 = 3 us.
  const workbook::Profile region_child({make_event("mlp_forward", 0, 100000, Category::user_annotation),
                                        make_event("act_mul", 60000, 70000, Category::user_annotation),
                                        make_event("gelu", 61000, 64000, Category::user_annotation),
                                        make_event("aten::gelu", 61500, 63500), make_event("aten::mul", 65000, 69000)});
  CHECK(exercises::stage_breakdown(region_child, 10, 20, 30)[2].self_us == doctest::Approx(3));
  CHECK_THROWS_AS(exercises::stage_breakdown(workbook::Profile({make_event("aten::mm", 0, 1)}), 1, 1, 1),
                  std::invalid_argument);
  // A region whose name only starts with "mlp_forward" is no forward (trial 31: found by prefix).
  const workbook::Profile only_longer_name({make_event("mlp_forward_pre", 0, 100000, Category::user_annotation),
                                            make_event("gate_proj", 0, 30000, Category::user_annotation)});
  CHECK_THROWS_AS(exercises::stage_breakdown(only_longer_name, 10, 20, 30), std::invalid_argument);
}

TEST_CASE("two unequal forwards: means over both, GEMMs by their total time, addmm counted too") {
  // Forward 1 [0, 100] us, forward 2 [200, 400] us. In forward 2 gate's aten::mm spends 40 of its
  // 80 us in a child op, and in forward 1 up_proj's GEMM is an aten::addmm.
  const auto s = stages_of({make_event("mlp_forward", 0, 100000, region), make_event("gate_proj", 0, 30000, region),
                            make_event("aten::mm", 5000, 25000), make_event("up_proj", 30000, 60000, region),
                            make_event("aten::addmm", 35000, 55000), make_event("act_mul", 60000, 70000, region),
                            make_event("down_proj", 70000, 100000, region), make_event("aten::mm", 72000, 97000),
                            make_event("mlp_forward", 200000, 400000, region),
                            make_event("gate_proj", 200000, 290000, region), make_event("aten::mm", 205000, 285000),
                            make_event("aten::resize_", 210000, 250000), make_event("up_proj", 290000, 330000, region),
                            make_event("aten::mm", 292000, 328000), make_event("act_mul", 330000, 360000, region),
                            make_event("down_proj", 360000, 400000, region), make_event("aten::mm", 362000, 398000)});
  CHECK(s[0].total_us == doctest::Approx((30 + 90) / 2.0));  // the mean of both forwards, not the first
  CHECK(s[0].gemm_us == doctest::Approx((20 + 80) / 2.0));   // the GEMM's total time, its child included
  CHECK(s[0].self_us == doctest::Approx((10 + 10) / 2.0));
  CHECK(s[1].gemm_us == doctest::Approx((20 + 36) / 2.0));  // aten::addmm is a GEMM too
  CHECK(s[2].total_us == doctest::Approx((10 + 30) / 2.0));
  CHECK(s[3].gemm_share == doctest::Approx(((25 + 36) / 2.0) / ((30 + 40) / 2.0)));
}

TEST_CASE("a stage is averaged per forward: missing in one counts as zero there, one outside a forward not at all") {
  // A stray gate_proj [500, 600] us outside every forward; forward 2 has no act_mul.
  const workbook::Profile p({make_event("mlp_forward", 0, 100000, region), make_event("gate_proj", 0, 30000, region),
                             make_event("aten::mm", 5000, 25000), make_event("up_proj", 30000, 60000, region),
                             make_event("aten::mm", 35000, 55000), make_event("act_mul", 60000, 70000, region),
                             make_event("down_proj", 70000, 100000, region), make_event("aten::mm", 72000, 97000),
                             make_event("mlp_forward", 200000, 300000, region),
                             make_event("gate_proj", 200000, 230000, region), make_event("aten::mm", 205000, 225000),
                             make_event("up_proj", 230000, 260000, region), make_event("aten::mm", 235000, 255000),
                             make_event("down_proj", 260000, 300000, region), make_event("aten::mm", 262000, 297000),
                             make_event("gate_proj", 500000, 600000, region), make_event("aten::mm", 510000, 590000)});
  const auto s = exercises::stage_breakdown(p, 10, 20, 30);
  REQUIRE(s.size() == 4);
  CHECK(s[0].total_us == doctest::Approx(30));  // the stray gate_proj is in no forward
  CHECK(s[0].gemm_us == doctest::Approx(20));
  CHECK(s[2].total_us == doctest::Approx(10 / 2.0));  // act_mul: 10 us in forward 1, none in forward 2
  // A forward with no stage at all still counts: the means are over every forward.
  std::vector<workbook::Event> with_empty(p.events().begin(), p.events().end());
  with_empty.push_back(make_event("mlp_forward", 700000, 800000, region));
  const auto e = exercises::stage_breakdown(workbook::Profile(std::move(with_empty)), 10, 20, 30);
  CHECK(e[0].total_us == doctest::Approx(60 / 3.0));
}

TEST_CASE("a stage no forward ran, or one without GEMM time: share and rate are 0, never NaN or infinity") {
  // One forward: gate_proj holds no GEMM at all, and down_proj never ran.
  const auto s = stages_of({make_event("mlp_forward", 0, 100000, region), make_event("gate_proj", 0, 30000, region),
                            make_event("up_proj", 30000, 60000, region), make_event("aten::mm", 35000, 55000),
                            make_event("act_mul", 60000, 70000, region)});
  CHECK(s[0].flops == 2 * 10 * 20 * 30);  // counted from the shapes, ran or not
  CHECK(s[0].gemm_us == 0);
  CHECK(s[0].gemm_gflops == 0);  // FLOPs over no GEMM time: no rate, not infinity
  CHECK(s[1].gemm_share == doctest::Approx(20.0 / 30.0));
  CHECK(s[3].stage == "down_proj");
  CHECK(s[3].total_us == 0);
  CHECK(s[3].gemm_share == 0);  // 0 over 0: no share, not NaN
  CHECK(s[3].gemm_gflops == 0);
}

TEST_CASE("two forwards inside one step: the means are per forward, not per step") {
  // Two micro-batches in ProfilerStep#1, each a forward whose gate_proj (30 us) holds a 20 us GEMM.
  const auto s = stages_of({make_event("ProfilerStep#1", 0, 300000, region),
                            make_event("mlp_forward", 0, 100000, region), make_event("gate_proj", 0, 30000, region),
                            make_event("aten::mm", 5000, 25000), make_event("mlp_forward", 150000, 250000, region),
                            make_event("gate_proj", 150000, 180000, region), make_event("aten::mm", 155000, 175000)});
  CHECK(s[0].total_us == doctest::Approx(30));
  CHECK(s[0].gemm_us == doctest::Approx(20));
  CHECK(s[0].gemm_gflops == doctest::Approx(2.0 * 10 * 20 * 30 / 20e3));
}

TEST_CASE("self time subtracts every host child: a Python module's span and a runtime call too") {
  // As a GPU trace recorded from Python has them: gate_proj holds an nn.Module span around its
  // aten::mm, act_mul launches a kernel straight from the region (a cudaLaunchKernel call).
  const auto s = stages_of({make_event("mlp_forward", 0, 100000, region), make_event("gate_proj", 0, 30000, region),
                            make_event("nn.Module: Linear_0", 2000, 28000, Category::other),
                            make_event("aten::mm", 5000, 25000), make_event("act_mul", 40000, 50000, region),
                            make_event("cudaLaunchKernel", 41000, 48000, Category::runtime)});
  CHECK(s[0].self_us == doctest::Approx(4));  // 30 - 26
  CHECK(s[0].gemm_us == doctest::Approx(20));
  CHECK(s[2].self_us == doctest::Approx(3));  // 10 - 7
}

TEST_CASE("self time and GEMM share are not clamped: children that overlap make them negative or over 1") {
  // Two ops inside gate_proj whose intervals overlap (clock readings of a real trace can): their
  // totals, 19 + 19 us, exceed the region's 30 us, so its self time is -8 us.
  const workbook::Profile p({make_event("mlp_forward", 0, 100000, region), make_event("gate_proj", 0, 30000, region),
                             make_event("aten::mm", 1000, 20000), make_event("aten::add", 10000, 29000)});
  REQUIRE(p.self_ns(p.find("gate_proj").front()) == -8000);
  const auto s = exercises::stage_breakdown(p, 10, 20, 30);
  REQUIRE(s.size() == 4);
  CHECK(s[0].self_us == doctest::Approx(-8));
  // Two overlapping GEMMs: 38 us of GEMM in a 30 us stage, a share of 38/30, reported as it is.
  const workbook::Profile two({make_event("mlp_forward", 0, 100000, region), make_event("gate_proj", 0, 30000, region),
                               make_event("aten::mm", 1000, 20000), make_event("aten::mm", 10000, 29000)});
  const auto t = exercises::stage_breakdown(two, 10, 20, 30);
  REQUIRE(t.size() == 4);
  CHECK(t[0].gemm_share == doctest::Approx(38.0 / 30));
}

TEST_CASE("a GPU trace's device mirrors of the regions are not forwards") {
  // Kineto mirrors each region on the GPU lane (gpu_user_annotation on stream 7): one forward here.
  auto mirror = [&](const char* name, std::int64_t start, std::int64_t end) {
    workbook::Event e = make_event(name, start, end, region);
    e.device_type = workbook::DeviceType::cuda;
    e.work = workbook::DeviceWork::annotation;
    e.thread = 7;
    return e;
  };
  const auto s = stages_of({make_event("mlp_forward", 0, 100000, region), make_event("gate_proj", 0, 30000, region),
                            make_event("aten::mm", 5000, 25000), mirror("mlp_forward", 10000, 120000),
                            mirror("gate_proj", 10000, 45000)});
  CHECK(s[0].total_us == doctest::Approx(30));
  CHECK(s[0].gemm_us == doctest::Approx(20));
  // A profile whose only mlp_forward is a device mirror holds no forward: an error, not means of 0 / 0.
  const workbook::Profile only_mirrors({mirror("mlp_forward", 10000, 120000), mirror("gate_proj", 10000, 45000)});
  CHECK_THROWS_AS(exercises::stage_breakdown(only_mirrors, 10, 20, 30), std::invalid_argument);
}

namespace {

// One forward whose gate_proj holds one GEMM: enough for the FLOPs, which come from the shapes.
workbook::Profile one_gemm_forward() {
  return workbook::Profile({make_event("mlp_forward", 0, 100000, region), make_event("gate_proj", 0, 30000, region),
                            make_event("aten::mm", 5000, 25000)});
}

}  // namespace

TEST_CASE("FLOPs at a real model's size: 2 T D H does not fit in 32 bits") {
  const auto s = exercises::stage_breakdown(one_gemm_forward(), 8192, 4096, 16384);
  CHECK(s[0].flops == std::int64_t(2) * 8192 * 4096 * 16384);
  CHECK(s[3].flops == std::int64_t(2) * 8192 * 4096 * 16384);
}

TEST_CASE("an empty batch is a size too: no tokens, no FLOPs, no error, and the times the profile recorded") {
  // tokens = 0 (a batch of none, as lesson 09's step allows): every stage's GEMM does 2·0·D·H = 0
  // FLOPs; so does a layer of width 0. The regions still ran: their times are the profile's.
  for (const auto& [tokens, dim, hidden] : {std::array<std::int64_t, 3>{0, 4096, 16384}, {8, 0, 16}, {8, 16, 0}}) {
    CAPTURE(tokens);
    CAPTURE(dim);
    CAPTURE(hidden);
    const auto s = exercises::stage_breakdown(one_gemm_forward(), tokens, dim, hidden);
    REQUIRE(s.size() == 4);
    for (const auto& stage : s) CHECK(stage.flops == 0);
    CHECK(s[0].total_us == doctest::Approx(30));
    CHECK(s[0].gemm_us == doctest::Approx(20));
  }
}

TEST_CASE("FLOPs are counted exactly: past 2^53 a double would round 2 T D H") {
  // Odd sizes: 2 T D H = 1999922000789999286, about 2^61, where doubles lie 256 apart.
  const auto s = exercises::stage_breakdown(one_gemm_forward(), 999999, 999983, 999979);
  CHECK(s[0].flops == 1999922000789999286);
  CHECK(s[3].flops == 1999922000789999286);
}

TEST_CASE("per forward means sums: two GEMMs or two regions of a stage in one forward add up") {
  // One forward; gate_proj runs twice in it (20 us each, each with two 8 us GEMMs).
  const auto s =
      stages_of({make_event("mlp_forward", 0, 200000, region), make_event("gate_proj", 0, 20000, region),
                 make_event("aten::mm", 1000, 9000), make_event("aten::mm", 10000, 18000),
                 make_event("gate_proj", 20000, 40000, region), make_event("aten::mm", 21000, 29000),
                 make_event("aten::mm", 30000, 38000), make_event("up_proj", 40000, 60000, region),
                 make_event("act_mul", 60000, 70000, region), make_event("down_proj", 70000, 100000, region)});
  CHECK(s[0].total_us == doctest::Approx(40));  // both regions of the forward
  CHECK(s[0].gemm_us == doctest::Approx(32));   // all four GEMMs' time in the forward, not one GEMM's mean
  // A gate_proj region nested in another (a wrapper that labels its own call again) is a region of
  // the stage too: it counts again, as Python's key_averages sums every event of one name. Outer
  // [0, 30] us with aten::mm [1, 9] and inner gate_proj [10, 20] with aten::mm [11, 19].
  const workbook::Profile nested({make_event("mlp_forward", 0, 100000, region),
                                  make_event("gate_proj", 0, 30000, region), make_event("aten::mm", 1000, 9000),
                                  make_event("gate_proj", 10000, 20000, region), make_event("aten::mm", 11000, 19000)});
  const auto n = exercises::stage_breakdown(nested, 10, 20, 30);
  CHECK(n[0].total_us == doctest::Approx(30 + 10));
  CHECK(n[0].self_us == doctest::Approx((30 - 8 - 10) + (10 - 8)));
  CHECK(n[0].gemm_us == doctest::Approx(8 + 8 + 8));  // the inner mm beneath both regions
  // A region whose name only starts with a stage's is not that stage (down_proj_dropout beside
  // down_proj), and every GEMM event counts, an aten::mm beneath an aten::addmm too (as
  // key_averages counts each event of a name).
  const workbook::Profile near_names({make_event("mlp_forward", 0, 100000, region),
                                      make_event("down_proj", 70000, 90000, region),
                                      make_event("aten::addmm", 71000, 89000), make_event("aten::mm", 72000, 80000),
                                      make_event("down_proj_dropout", 90000, 100000, region)});
  const auto d = exercises::stage_breakdown(near_names, 10, 20, 30);
  CHECK(d[3].total_us == doctest::Approx(20));
  CHECK(d[3].gemm_us == doctest::Approx(18 + 8));
}

TEST_CASE("a stage region inside another stage's region is a region of both: each stage counts its own") {
  // act_mul [60, 90] us holds an up_proj [62, 80] (a fused call that labels its inner GEMM) with an
  // aten::mm [63, 79]: up_proj counts it as any of its regions, act_mul keeps its whole span.
  const auto s = stages_of({make_event("mlp_forward", 0, 100000, region), make_event("gate_proj", 0, 20000, region),
                            make_event("act_mul", 60000, 90000, region), make_event("up_proj", 62000, 80000, region),
                            make_event("aten::mm", 63000, 79000), make_event("down_proj", 90000, 100000, region)});
  CHECK(s[1].total_us == doctest::Approx(18));
  CHECK(s[1].self_us == doctest::Approx(2));
  CHECK(s[1].gemm_us == doctest::Approx(16));
  CHECK(s[2].total_us == doctest::Approx(30));
  CHECK(s[2].self_us == doctest::Approx(12));  // 30 minus its direct child up_proj's 18
  CHECK(s[2].gemm_us == doctest::Approx(16));  // the GEMM lies beneath act_mul too
}

TEST_CASE("a forward nested in another is a forward too: its stages count in both") {
  // The outer forward [0, 100] us has a gate_proj [0, 20] of its own and holds a second forward
  // [30, 80] with a gate_proj [30, 50]: two forwards, 20 + 20 us in the outer, 20 in the inner.
  const auto s =
      stages_of({make_event("mlp_forward", 0, 100000, region), make_event("gate_proj", 0, 20000, region),
                 make_event("mlp_forward", 30000, 80000, region), make_event("gate_proj", 30000, 50000, region)});
  CHECK(s[0].total_us == doctest::Approx((40 + 20) / 2.0));
}

TEST_CASE("a stage's regions are summed wherever they lie in the forward: not a span, not only direct children") {
  // mlp_forward -> geglu -> the stages; gate_proj runs twice with up_proj between them.
  const auto s = stages_of({make_event("mlp_forward", 0, 200000, region), make_event("geglu", 0, 190000, region),
                            make_event("gate_proj", 0, 20000, region), make_event("up_proj", 20000, 40000, region),
                            make_event("gate_proj", 40000, 60000, region), make_event("act_mul", 60000, 70000, region),
                            make_event("down_proj", 70000, 100000, region)});
  CHECK(s[0].total_us == doctest::Approx(40));  // 20 + 20, not the 60 from the first start to the last end
  CHECK(s[1].total_us == doctest::Approx(20));
  CHECK(s[3].total_us == doctest::Approx(30));
}

TEST_CASE("a stage counts only inside a forward, even when a step region holds it") {
  // As a Session records: ProfilerStep#1 holds the forward and, outside it, a stray gate_proj.
  const auto s = stages_of({make_event("ProfilerStep#1", 0, 1000000, region),
                            make_event("mlp_forward", 0, 100000, region), make_event("gate_proj", 0, 30000, region),
                            make_event("aten::mm", 5000, 25000), make_event("up_proj", 30000, 60000, region),
                            make_event("act_mul", 60000, 70000, region), make_event("down_proj", 70000, 100000, region),
                            make_event("gate_proj", 500000, 600000, region), make_event("aten::mm", 510000, 590000)});
  CHECK(s[0].total_us == doctest::Approx(30));
  CHECK(s[0].gemm_us == doctest::Approx(20));
}

TEST_CASE("a forward's stages are the regions beneath it, not any region of that name during it") {
  // Thread 1 runs the forward; meanwhile thread 2 runs a gate_proj of its own (a data loader's
  // model, another request): inside the forward's time, but not beneath it.
  const workbook::Profile p(
      {make_event("mlp_forward", 0, 100000, region, 1), make_event("gate_proj", 0, 30000, region, 1),
       make_event("aten::mm", 5000, 25000, Category::cpu_op, 1), make_event("up_proj", 30000, 60000, region, 1),
       make_event("act_mul", 60000, 70000, region, 1), make_event("down_proj", 70000, 100000, region, 1),
       make_event("gate_proj", 10000, 20000, region, 2), make_event("aten::mm", 12000, 20000, Category::cpu_op, 2)});
  const auto s = exercises::stage_breakdown(p, 10, 20, 30);
  REQUIRE(s.size() == 4);
  CHECK(s[0].total_us == doctest::Approx(30));
  CHECK(s[0].gemm_us == doctest::Approx(20));
}

TEST_CASE("the GEMMs are aten::mm and aten::addmm: a Python-style aten::linear around one is not a second GEMM") {
  // A trace recorded from Python: aten::linear [5, 25] us holds the aten::addmm [6, 24] us that does the work.
  // up_proj holds an aten::_addmm_activation [31, 59] us (a GEMM with its activation fused, as
  // torch.compile emits on a GPU): not one of the two names the contract counts.
  const auto s =
      stages_of({make_event("mlp_forward", 0, 100000, region), make_event("gate_proj", 0, 30000, region),
                 make_event("aten::linear", 5000, 25000), make_event("aten::addmm", 6000, 24000),
                 make_event("up_proj", 30000, 60000, region), make_event("aten::_addmm_activation", 31000, 59000)});
  CHECK(s[0].gemm_us == doctest::Approx(18));
  CHECK(s[1].gemm_us == 0);
}

TEST_CASE("a GEMM beneath act_mul counts in its gemm_us and share: only its FLOPs and rate are 0 by definition") {
  // An activation written as a matrix product (a gate mixed by a small GEMM): act_mul [60, 70] us
  // holds aten::mm [61, 66] us. The contract's gemm_us is every stage's; flops is 0 for act_mul.
  const auto s = stages_of({make_event("mlp_forward", 0, 100000, region), make_event("act_mul", 60000, 70000, region),
                            make_event("aten::mm", 61000, 66000)});
  CHECK(s[2].gemm_us == doctest::Approx(5));
  CHECK(s[2].gemm_share == doctest::Approx(0.5));
  CHECK(s[2].flops == 0);
  CHECK(s[2].gemm_gflops == 0);
}
