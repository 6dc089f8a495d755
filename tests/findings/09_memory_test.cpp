// Lesson 09's findings on hand-made byte counts: shown, and NOT shown one buffer off.
#include <doctest/doctest.h>

#include "synthetic_events.h"
#include "workbook/findings/09_memory.h"

using testing::make_allocation;
using testing::make_event;
using workbook::Category;
using workbook::Profile;
namespace f09 = workbook::findings09;

namespace {

constexpr std::int64_t kActivation = 4096, kOutput = 1024;

}  // namespace

TEST_CASE("without autograd only the output is kept: NOT shown when a buffer outlives the forward") {
  const f09::ForwardBytes expression{4 * kActivation + kOutput, kOutput}, staged{3 * kActivation, kOutput};
  CHECK(f09::no_grad_keeps_only_the_output(expression, staged, kOutput).holds);
  CHECK_FALSE(f09::no_grad_keeps_only_the_output(expression, {3 * kActivation, kOutput + kActivation}, kOutput).holds);
}

TEST_CASE("temporaries live to the ';': NOT shown when the staged forward peaks as high as the expression") {
  const f09::ForwardBytes expression{4 * kActivation + kOutput, kOutput};
  CHECK(f09::temporaries_live_to_the_semicolon(expression, {3 * kActivation, kOutput}, kActivation, kOutput).holds);
  CHECK_FALSE(
      f09::temporaries_live_to_the_semicolon(expression, {4 * kActivation + kOutput, kOutput}, kActivation, kOutput)
          .holds);
  // The output larger than two [T, hidden] buffers: the staged peak is one plus the output.
  CHECK(f09::temporaries_live_to_the_semicolon({4 * 100 + 300, 300}, {100 + 300, 300}, 100, 300).holds);
}

TEST_CASE("autograd keeps four [T, hidden] buffers: NOT shown with three") {
  CHECK(f09::autograd_keeps_four_buffers({0, 4 * kActivation + kOutput}, kActivation, kOutput).holds);
  CHECK_FALSE(f09::autograd_keeps_four_buffers({0, 3 * kActivation + kOutput}, kActivation, kOutput).holds);
}

TEST_CASE("steps keep only their gradients: NOT shown when one keeps more, or zero_grad frees nothing") {
  const std::int64_t g = 3000;
  const std::vector<f09::StepBytes> steps{{0, 0, g}, {g, 0, g}, {g, 0, g}};
  CHECK(f09::steps_keep_only_gradients(steps, g).holds);
  auto leaks = steps;
  leaks[1].at_step_end = g + 64;
  CHECK_FALSE(f09::steps_keep_only_gradients(leaks, g).holds);
  auto never_freed = steps;
  never_freed[2].at_forward_start = g;
  never_freed[2].at_step_end = 2 * g;
  CHECK_FALSE(f09::steps_keep_only_gradients(never_freed, g).holds);
  CHECK_FALSE(f09::steps_keep_only_gradients({}, g).holds);
}

TEST_CASE("the peak is in backward: NOT shown for a peak at the forward's end") {
  CHECK(f09::peak_in_backward("backward", "e").holds);
  CHECK_FALSE(f09::peak_in_backward("forward", "e").holds);
}

TEST_CASE("Self CPU Mem nets allocations and frees: NOT shown when the node frees nothing or a row is missing") {
  auto profile = [](std::int64_t freed) {
    return Profile({make_event("autograd::engine::evaluate_function: MulBackward0", 0, 100),
                    make_event("aten::mul", 10, 40), make_allocation(20, 4096), make_allocation(60, freed)});
  };
  CHECK(f09::self_memory_nets(workbook::KeyAverages(profile(-8192))).holds);
  CHECK_FALSE(f09::self_memory_nets(workbook::KeyAverages(profile(0))).holds);
  const auto missing = f09::self_memory_nets(workbook::KeyAverages(Profile({make_event("aten::mul", 0, 10)})));
  CHECK_FALSE(missing.holds);
  CHECK(missing.evidence.find("no row") != std::string::npos);
}
