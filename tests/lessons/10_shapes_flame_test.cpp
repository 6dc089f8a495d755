// Checks of exercise 10: the costliest (op, input shapes) pair, exact on a synthetic profile and
// found on a real mixed workload.
#include "workbook_doctest.h"

#include <stdexcept>

#include "10_shapes_flame.h"
#include "record_forwards.h"
#include "synthetic_events.h"
#include "workbook/profiler/key_averages.h"

using testing::make_event;
using workbook::Category;

namespace {

workbook::Event op(const char* name, std::int64_t start_us, std::int64_t end_us,
                   std::vector<std::vector<std::int64_t>> shapes) {
  workbook::Event e = make_event(name, start_us * 1000, end_us * 1000);
  e.input_shapes = std::move(shapes);
  return e;
}

}  // namespace

TEST_CASE("exact on a synthetic profile: shapes split an op, regions are never the answer") {
  // A long region with 40 us of its own time; aten::mm at two shapes: 3 x 10 us small vs 1 x 25 us
  // large; aten::add 1 x 5 us. By name, mm is 55 us; by shape, the small one wins with 30 us.
  const workbook::Profile p({make_event("ProfilerStep#1", 0, 110000, Category::user_annotation),
                             op("aten::mm", 0, 10, {{8, 8}, {8, 8}}), op("aten::mm", 10, 20, {{8, 8}, {8, 8}}),
                             op("aten::mm", 20, 30, {{8, 8}, {8, 8}}), op("aten::mm", 40, 65, {{64, 64}, {64, 64}}),
                             op("aten::add", 65, 70, {{8}, {8}, {}})});
  const auto c = exercises::most_expensive_shape(p);
  CHECK(c.op == "aten::mm");
  CHECK(c.input_shapes == "[[8, 8], [8, 8]]");
  CHECK(c.calls == 3);
  CHECK(c.self_us == doctest::Approx(30));
  CHECK(c.share == doctest::Approx(30.0 / 110.0));
  CHECK_THROWS_AS(
      exercises::most_expensive_shape(workbook::Profile({make_event("region", 0, 10, Category::user_annotation)})),
      std::invalid_argument);
  // Every input's shape counts, not only the first: [[8, 8], [8, 64]] is a list of its own.
  const workbook::Profile second_differs(
      {make_event("ProfilerStep#1", 0, 100000, Category::user_annotation), op("aten::mm", 0, 10, {{8, 8}, {8, 8}}),
       op("aten::mm", 10, 20, {{8, 8}, {8, 8}}), op("aten::mm", 30, 55, {{8, 8}, {8, 64}})});
  const auto d = exercises::most_expensive_shape(second_differs);
  CHECK(d.input_shapes == "[[8, 8], [8, 64]]");
  CHECK(d.self_us == doctest::Approx(25));
  CHECK(d.calls == 1);
  // The lists are kept apart as lists: [[8, 8], [8]] and [[8], [8, 8]] hold the same numbers in
  // the same order, and are two rows (20 us each) below aten::mm's 30 us.
  const workbook::Profile same_numbers({make_event("ProfilerStep#1", 0, 100000, Category::user_annotation),
                                        op("aten::cat", 0, 20, {{8, 8}, {8}}), op("aten::cat", 20, 40, {{8}, {8, 8}}),
                                        op("aten::mm", 50, 80, {{8, 8}, {8, 8}})});
  CHECK(exercises::most_expensive_shape(same_numbers).op == "aten::mm");
}

TEST_CASE("the pair is ranked as a pair: the op with the most time overall need not own the costliest shape") {
  // aten::add at ten shapes, 5 us each (50 us by name); aten::mm at one shape for 30 us.
  std::vector<workbook::Event> events{make_event("ProfilerStep#1", 0, 200000, Category::user_annotation),
                                      op("aten::mm", 0, 30, {{64, 64}, {64, 64}})};
  for (std::int64_t k = 0; k < 10; ++k) events.push_back(op("aten::add", 40 + 10 * k, 45 + 10 * k, {{k + 1}, {k + 1}}));
  const auto c = exercises::most_expensive_shape(workbook::Profile(std::move(events)));
  CHECK(c.op == "aten::mm");
  CHECK(c.self_us == doctest::Approx(30));
}

TEST_CASE("nested ops and two steps apart: ranked by self time, share of the self time of all events") {
  // aten::linear [0, 50] us holds aten::addmm [5, 45]: by total time linear (50) beats addmm (40),
  // by self time addmm wins (40 vs 10). Two steps with a gap between them: the self time of all
  // events is 160 us while the trace spans 260 us.
  const workbook::Profile p({make_event("ProfilerStep#1", 0, 100000, Category::user_annotation),
                             op("aten::linear", 0, 50, {{16, 16}, {16, 16}, {16}}),
                             op("aten::addmm", 5, 45, {{16}, {16, 16}, {16, 16}}),
                             op("aten::mm", 60, 90, {{8, 8}, {8, 8}}),
                             make_event("ProfilerStep#2", 200000, 260000, Category::user_annotation),
                             op("aten::add", 210, 220, {{8}, {8}, {}})});
  const auto c = exercises::most_expensive_shape(p);
  CHECK(c.op == "aten::addmm");
  CHECK(c.self_us == doctest::Approx(40));
  CHECK(c.calls == 1);
  CHECK(c.share == doctest::Approx(40.0 / 160.0));
  // The winner has a child op of its own: its self time is its total minus the child's.
  const workbook::Profile parent_wins({make_event("ProfilerStep#1", 0, 100000, Category::user_annotation),
                                       op("aten::linear", 0, 60, {{16, 16}, {16, 16}, {16}}),
                                       op("aten::addmm", 5, 15, {{16}, {16, 16}, {16, 16}})});
  const auto w = exercises::most_expensive_shape(parent_wins);
  CHECK(w.op == "aten::linear");
  CHECK(w.self_us == doctest::Approx(50));
  CHECK(w.share == doctest::Approx(50.0 / 100.0));
}

TEST_CASE("three levels deep: a self time subtracts direct children only, as Python's does") {
  // A [0, 100] us -> B [0, 10] -> C [0, 5]; D 88 us alone. A's self time is 100 - 10 = 90 (C is
  // inside B's 10): A wins. Subtracting every descendant would give A 85 and crown D.
  const workbook::Profile p({make_event("ProfilerStep#1", 0, 300000, Category::user_annotation),
                             op("aten::linear", 0, 100, {{4, 4}}), op("aten::matmul", 0, 10, {{4, 4}}),
                             op("aten::mm", 0, 5, {{4, 4}}), op("aten::gelu", 200, 288, {{4, 4}})});
  const auto c = exercises::most_expensive_shape(p);
  CHECK(c.op == "aten::linear");
  CHECK(c.self_us == doctest::Approx(90));
  CHECK(c.share == doctest::Approx(90.0 / 300.0));
}

TEST_CASE("a profile without steps (no schedule, no ProfilerStep regions) still has its operators") {
  const workbook::Profile p({op("aten::mm", 0, 30, {{8, 8}, {8, 8}}), op("aten::add", 30, 40, {{8}, {8}, {}})});
  const auto c = exercises::most_expensive_shape(p);
  CHECK(c.op == "aten::mm");
  CHECK(c.share == doctest::Approx(30.0 / 40.0));
  // The share is over CPU time, not over time: a gap between the ops is nobody's self time.
  const workbook::Profile gap({op("aten::mm", 0, 30, {{8, 8}, {8, 8}}), op("aten::add", 50, 60, {{8}, {8}, {}})});
  CHECK(exercises::most_expensive_shape(gap).share == doctest::Approx(30.0 / 40.0));
}

TEST_CASE("the share counts every CPU event's self time, an op outside the steps too") {
  // A 100 us step holding a 10 us mm, and a 30 us add after it: 130 us of self CPU time.
  const workbook::Profile p({make_event("ProfilerStep#1", 0, 100000, Category::user_annotation),
                             op("aten::mm", 0, 10, {{8, 8}, {8, 8}}), op("aten::add", 200, 230, {{8}, {8}, {}})});
  const auto c = exercises::most_expensive_shape(p);
  CHECK(c.op == "aten::add");
  CHECK(c.share == doctest::Approx(30.0 / 130.0));
}

TEST_CASE("a runtime call is CPU time too: a kernel launch inside an op counts in the share") {
  // aten::mm [0, 40) us launches a kernel: cudaLaunchKernel [10, 20) is 10 us of self CPU time of its
  // own (Python counts it in self_cpu_time_total), leaving the mm 30 of the 40.
  workbook::Event launch = testing::make_launch(10000, 20000, 1);
  const workbook::Profile p({op("aten::mm", 0, 40, {{8, 8}, {8, 8}}), launch});
  const auto c = exercises::most_expensive_shape(p);
  CHECK(c.op == "aten::mm");
  CHECK(c.self_us == doctest::Approx(30));
  CHECK(c.share == doctest::Approx(30.0 / 40.0));
  // The kernel it launched (100 us on the GPU) gives aten::mm's row device time: still an operator
  // on the CPU, still the answer (trial 19: "rows with device time" taken for device work).
  workbook::Event mm = op("aten::mm", 0, 40, {{8, 8}, {8, 8}});
  mm.external_id = 5;
  launch.external_id = 5;
  workbook::Event kernel = testing::make_device_work("gemm_kernel", 25000, 125000, 7, workbook::DeviceWork::kernel, 1);
  kernel.external_id = 5;
  const workbook::Profile with_kernel({mm, launch, kernel});
  REQUIRE(workbook::KeyAverages(with_kernel, true).sorted("self_cpu_time_total").front().device_total_us > 0);
  const auto k = exercises::most_expensive_shape(with_kernel);
  CHECK(k.op == "aten::mm");
  CHECK(k.self_us == doctest::Approx(30));
}

TEST_CASE("every row competes, not the first ten by total time, and self times are not rounded") {
  // Ten aten::linear calls at ten shapes, 60 us each, all of it in two 30 us children: ten rows
  // with more total time than aten::mm's 50 us, and none with any self time.
  std::vector<workbook::Event> events{make_event("ProfilerStep#1", 0, 1000000, Category::user_annotation)};
  for (std::int64_t k = 1; k <= 10; ++k) {
    const std::int64_t at = k * 70;
    events.push_back(op("aten::linear", at, at + 60, {{k, 4}}));
    events.push_back(op("aten::t", at, at + 30, {{k, 4}}));
    events.push_back(op("aten::addmm", at + 30, at + 60, {{k, 4}, {4, 4}}));
  }
  events.push_back(op("aten::mm", 800, 850, {{8, 8}, {8, 8}}));
  const auto c = exercises::most_expensive_shape(workbook::Profile(events));
  CHECK(c.op == "aten::mm");
  CHECK(c.self_us == doctest::Approx(50));
  // 12.5 us is 12.5 us: aten::mm [0, 12.5) beside aten::add [20, 30).
  const auto half = exercises::most_expensive_shape(
      workbook::Profile({make_event("aten::mm", 0, 12500), make_event("aten::add", 20000, 30000)}));
  CHECK(half.self_us == doctest::Approx(12.5));
  CHECK(half.share == doctest::Approx(12.5 / 22.5));
}

TEST_CASE("a scalar argument's empty shape is one of the op's input shapes, as Python lists them") {
  const workbook::Profile p({make_event("ProfilerStep#1", 0, 100000, Category::user_annotation),
                             op("aten::add", 0, 50, {{8}, {8}, {}}), op("aten::mm", 50, 60, {{8, 8}, {8, 8}})});
  const auto c = exercises::most_expensive_shape(p);
  CHECK(c.op == "aten::add");
  CHECK(c.input_shapes == "[[8], [8], []]");
}

TEST_CASE("device work and memory are not operators: a long kernel never wins, and alone it is no answer") {
  const workbook::Profile with_kernel({make_event("ProfilerStep#1", 0, 100000, Category::user_annotation),
                                       op("aten::mm", 0, 10, {{8, 8}, {8, 8}}),
                                       testing::make_device_work("gemm_kernel", 20000, 90000, 7)});
  const auto c = exercises::most_expensive_shape(with_kernel);
  CHECK(c.op == "aten::mm");
  // 10 us of the step's 100 us of CPU time; the kernel's 70 us run on the device, not the CPU.
  CHECK(c.share == doctest::Approx(0.1));
  const workbook::Profile kernel_only({make_event("ProfilerStep#1", 0, 100000, Category::user_annotation),
                                       testing::make_device_work("gemm_kernel", 20000, 90000, 7),
                                       testing::make_allocation(30000, 4096)});
  CHECK_THROWS_AS(exercises::most_expensive_shape(kernel_only), std::invalid_argument);
  // An allocation outside every host event is Python's "[memory]" row: not an operator either.
  const workbook::Profile memory_only(
      {make_event("ProfilerStep#1", 0, 100000, Category::user_annotation), testing::make_allocation(200000, 4096)});
  CHECK_THROWS_AS(exercises::most_expensive_shape(memory_only), std::invalid_argument);
}

TEST_CASE("an op that took no measurable time is still an op: the only one is the answer") {
  // A view in a trace of microsecond resolution: zero duration, zero self time.
  const workbook::Profile p(
      {make_event("ProfilerStep#1", 0, 100000, Category::user_annotation), op("aten::view", 10, 10, {{8, 8}, {2}})});
  const auto c = exercises::most_expensive_shape(p);
  CHECK(c.op == "aten::view");
  CHECK(c.self_us == 0);
  CHECK(c.calls == 1);
}

TEST_CASE(
    "self time is not clamped: an operator whose self time is negative is still an operator, the only one the answer") {
  // Two labels beneath the op overlap each other (neither holds the other): their 20 us exceed the
  // op's 15, so the op's self time is -5 us, as Python's self_cpu_time_total computes it.
  const workbook::Profile p({op("aten::foo", 10, 25, {{4, 4}}),
                             make_event("first", 10000, 20000, Category::user_annotation),
                             make_event("second", 15000, 25000, Category::user_annotation)});
  REQUIRE(p.self_ns(p.find("aten::foo").front()) == -5000);
  const auto c = exercises::most_expensive_shape(p);
  CHECK(c.op == "aten::foo");
  CHECK(c.self_us == doctest::Approx(-5.0));
  CHECK(c.calls == 1);
  // And in the share's denominator a negative self time counts as it is, as Python's
  // self_cpu_time_total adds it (trial 32: clamped at 0 there, 30 / 50 instead of 30 / 45).
  const workbook::Profile with_other(
      {op("aten::foo", 10, 25, {{4, 4}}), make_event("first", 10000, 20000, Category::user_annotation),
       make_event("second", 15000, 25000, Category::user_annotation), op("aten::bar", 30, 60, {{8, 8}})});
  const auto bar = exercises::most_expensive_shape(with_other);
  CHECK(bar.op == "aten::bar");
  CHECK(bar.share == doctest::Approx(30.0 / 45.0));
}

TEST_CASE("an operator need not be called aten::") {
  // A custom op (RECORD_FUNCTION in C++, as workbook::fused_gelu_mul) and an autograd node.
  const workbook::Profile p({make_event("ProfilerStep#1", 0, 100000, Category::user_annotation),
                             op("aten::mm", 0, 20, {{8, 8}, {8, 8}}),
                             op("workbook::fused_gelu_mul", 20, 70, {{8, 8}, {8, 8}}), op("MmBackward0", 70, 90, {})});
  const auto c = exercises::most_expensive_shape(p);
  CHECK(c.op == "workbook::fused_gelu_mul");
  CHECK(c.self_us == doctest::Approx(50));
}

TEST_CASE("an op without input shapes is still an op: a profile recorded without record_shapes") {
  // Every row then has the shapes "[]"; only the category tells a region from an op.
  const workbook::Profile p({make_event("ProfilerStep#1", 0, 100000, Category::user_annotation),
                             make_event("aten::mm", 0, 20000), make_event("MmBackward0", 20000, 80000)});
  const auto c = exercises::most_expensive_shape(p);
  CHECK(c.op == "MmBackward0");
  CHECK(c.input_shapes == "[]");
  CHECK(c.self_us == doctest::Approx(60));
}

TEST_CASE("on a real mixed workload the large GEMM is found, with its share") {
  torch::manual_seed(10);
  const auto big = torch::randn({384, 384}), small = torch::randn({16, 16}), v = torch::randn({4096});
  workbook::SessionOptions options;
  options.record_shapes = true;
  const auto p = testing::record_forwards(
      "mixed",
      [&] {
        torch::Tensor a = torch::mm(big, big);
        for (int i = 0; i < 20; ++i) a = torch::mm(small, small) + v.sum();
      },
      options);
  const auto c = exercises::most_expensive_shape(p);
  CHECK(c.op == "aten::mm");
  CHECK(c.input_shapes == "[[384, 384], [384, 384]]");
  CHECK(c.calls == 3);
  // Its share of the self time of all events, as Python's key_averages() adds it up.
  CHECK(c.share == doctest::Approx(c.self_us / workbook::KeyAverages(p).self_cpu_total_us()));
}

TEST_CASE("a runtime call is an operator as Python's table lists it: it can be the answer") {
  // A GPU trace's host side: a launch call (30 us) that took longer than the op before it (10 us).
  workbook::Event launch = make_event("cudaLaunchKernel", 20000, 50000, Category::runtime);
  const workbook::Profile p({op("aten::mm", 0, 10, {{8, 8}, {8, 8}}), launch});
  const auto c = exercises::most_expensive_shape(p);
  CHECK(c.op == "cudaLaunchKernel");
  CHECK(c.self_us == doctest::Approx(30));
  // The kernel it launched (100 us on the GPU) hangs beneath it in the tree, but it is device work:
  // the launch keeps its 30 us of self CPU time, 30 of the profile's 40.
  const workbook::Profile with_kernel(
      {op("aten::mm", 0, 10, {{8, 8}, {8, 8}}), testing::make_launch(20000, 50000, 1),
       testing::make_device_work("gemm_kernel", 25000, 125000, 7, workbook::DeviceWork::kernel, 1)});
  const auto k = exercises::most_expensive_shape(with_kernel);
  CHECK(k.op == "cudaLaunchKernel");
  CHECK(k.self_us == doctest::Approx(30));
  CHECK(k.share == doctest::Approx(30.0 / 40.0));
}

TEST_CASE("every thread's ops count: the costliest shape may run on another thread than the first event") {
  workbook::Event add = op("aten::add", 0, 50, {{8}, {8}});
  add.thread = 2;
  const workbook::Profile p({op("aten::mm", 0, 10, {{8, 8}, {8, 8}}), add});
  const auto c = exercises::most_expensive_shape(p);
  CHECK(c.op == "aten::add");
  CHECK(c.share == doctest::Approx(50.0 / 60.0));
}

TEST_CASE("one op at one shape on two threads is one row: Python's table groups across threads") {
  workbook::Event mm_on_2 = op("aten::mm", 100, 130, {{8, 8}, {8, 8}});
  mm_on_2.thread = 2;
  const workbook::Profile p({op("aten::mm", 0, 30, {{8, 8}, {8, 8}}), op("aten::add", 40, 80, {{8}, {8}}), mm_on_2});
  const auto c = exercises::most_expensive_shape(p);
  CHECK(c.op == "aten::mm");
  CHECK(c.self_us == doctest::Approx(60));
  CHECK(c.calls == 2);
  CHECK(c.share == doctest::Approx(0.6));
}

TEST_CASE("a GPU trace's device annotation is no CPU time: the share leaves it out") {
  // The host region "step" [0, 100] us and its mirror on the GPU lane (gpu_user_annotation on
  // stream 7, [20, 320] us): only the host one is CPU time, so aten::mm's share is 40 / 100.
  workbook::Event mirror = make_event("step", 20000, 320000, Category::user_annotation);
  mirror.device_type = workbook::DeviceType::cuda;
  mirror.work = workbook::DeviceWork::annotation;
  mirror.thread = 7;
  const workbook::Profile p(
      {make_event("step", 0, 100000, Category::user_annotation), op("aten::mm", 10, 50, {{8, 8}, {8, 8}}), mirror});
  const auto c = exercises::most_expensive_shape(p);
  CHECK(c.op == "aten::mm");
  CHECK(c.self_us == doctest::Approx(40));
  CHECK(c.share == doctest::Approx(0.4));
}

TEST_CASE("a host event of another category is an operator too, as a row of Python's table") {
  // A Python trace's module event (category "python_function", read as other): not a region.
  const workbook::Profile p(
      {op("aten::mm", 0, 10, {{8, 8}, {8, 8}}), make_event("nn.Module: Linear_0", 20000, 70000, Category::other)});
  CHECK(exercises::most_expensive_shape(p).op == "nn.Module: Linear_0");
}
