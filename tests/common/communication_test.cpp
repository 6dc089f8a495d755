// Communication against computation on hand-made profiles whose answers are known.
#include <doctest/doctest.h>

#include "synthetic_events.h"
#include "workbook/profiler/communication.h"

using testing::make_device_work;
using testing::make_event;
using workbook::Category;

namespace {

// A transfer on the process group's own lane (thread 9), as Gloo records it: asynchronous.
workbook::Event transfer(std::int64_t start, std::int64_t end) {
  return make_event("gloo:all_reduce", start, end, Category::user_annotation, 9);
}

}  // namespace

TEST_CASE("a transfer while backward computes is overlapped; one while the rank only waits is exposed") {
  // Step [0, 100): backward's mm [10, 40) runs while the transfer [20, 60) is in flight: 20 of its
  // 40 ns overlapped. The issuing call c10d::allreduce_ [18, 20) is not computation; after 40 the
  // rank computes nothing until 60 (it waits), so 20 ns are exposed.
  const workbook::Profile p({make_event("ProfilerStep#0", 0, 100, Category::user_annotation),
                             make_event("backward", 5, 45, Category::user_annotation), make_event("aten::mm", 10, 40),
                             make_event("c10d::allreduce_", 18, 20), transfer(20, 60)});
  const auto steps = workbook::step_communication(p);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].step_ns == 100);
  CHECK(steps[0].transfers == 1);
  CHECK(steps[0].communication_ns == 40);
  CHECK(steps[0].overlapped_ns == 20);
  CHECK(steps[0].exposed_ns() == 20);
  CHECK(steps[0].overlap_fraction() == doctest::Approx(0.5));
}

TEST_CASE("a transfer issued after backward and waited for is all exposed") {
  // The ops inside the collective call (a copy into its buffer) do not count as computation.
  const workbook::Profile p({make_event("ProfilerStep#0", 0, 100, Category::user_annotation),
                             make_event("aten::mm", 10, 40), make_event("c10d::allreduce_", 50, 58),
                             make_event("aten::copy_", 52, 56), transfer(55, 90)});
  const auto steps = workbook::step_communication(p);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].communication_ns == 35);
  CHECK(steps[0].overlapped_ns == 0);
  CHECK(steps[0].overlap_fraction() == 0);
}

TEST_CASE("an op that encloses a collective call computes only outside the call") {
  // A hook inside AccumulateGrad [10, 60) calls c10d::allreduce_ [20, 50) (waiting in it, as a hook
  // that waits would); the transfer flies [22, 55). Overlap is only [50, 55), after the call.
  const workbook::Profile p({make_event("ProfilerStep#0", 0, 100, Category::user_annotation),
                             make_event("torch::autograd::AccumulateGrad", 10, 60),
                             make_event("c10d::allreduce_", 20, 50), transfer(22, 55)});
  const auto a = workbook::activity(p);
  CHECK(a.computing == workbook::Intervals{{10, 20}, {50, 60}});
  const auto steps = workbook::step_communication(p);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].communication_ns == 33);
  CHECK(steps[0].overlapped_ns == 5);
}

TEST_CASE("transfers in flight together count once, and each step keeps to its own time") {
  // Step 0 [0, 100): transfers [10, 50) and [30, 70) cover 60 ns; the second step's transfer
  // [90, 130) starts in step 0 and counts 10 ns there, 30 in step 1 [100, 200).
  const workbook::Profile p({make_event("ProfilerStep#0", 0, 100, Category::user_annotation),
                             make_event("ProfilerStep#1", 100, 200, Category::user_annotation), transfer(10, 50),
                             transfer(30, 70), transfer(90, 130), make_event("aten::add", 120, 125)});
  const auto steps = workbook::step_communication(p);
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].communication_ns == 70);
  CHECK(steps[0].transfers == 3);
  CHECK(steps[1].communication_ns == 30);
  CHECK(steps[1].transfers == 0);
  CHECK(steps[1].overlapped_ns == 5);
}

TEST_CASE("NCCL kernels are communication and other kernels computation, on a GPU trace") {
  const workbook::Profile p({make_event("ProfilerStep#0", 0, 100, Category::user_annotation),
                             make_device_work("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 20, 80, 13),
                             make_device_work("ampere_sgemm_128x64_tn", 10, 50, 7)});
  const auto steps = workbook::step_communication(p);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].communication_ns == 60);
  CHECK(steps[0].overlapped_ns == 30);
}

TEST_CASE("a profile without steps or without communication has nothing to say") {
  CHECK(workbook::step_communication(workbook::Profile({make_event("aten::mm", 0, 10)})).empty());
  const auto steps = workbook::step_communication(workbook::Profile(
      {make_event("ProfilerStep#0", 0, 100, Category::user_annotation), make_event("aten::mm", 0, 10)}));
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].communication_ns == 0);
  CHECK(steps[0].overlap_fraction() == 0);
}
