// Lesson 08's findings on hand-made training steps: shown, and NOT shown on a counter-example.
#include <doctest/doctest.h>

#include <string>

#include "synthetic_events.h"
#include "workbook/findings/08_training_step.h"

using testing::make_event;
using workbook::Category;
using workbook::Event;
using workbook::Profile;
namespace f08 = workbook::findings08;

namespace {

Event op(const char* name, std::int64_t start, std::int64_t end, std::vector<std::vector<std::int64_t>> shapes = {},
         std::uint64_t thread = 1) {
  Event e = make_event(name, start, end, Category::cpu_op, thread);
  e.input_shapes = std::move(shapes);
  return e;
}

struct StepOptions {
  int mm_backward = 3;                // MmBackward0 nodes in the step's backward
  std::uint64_t backward_thread = 1;  // where the backward's ops ran
  bool zero_in_none_steps = false;    // an aten::zero_ even in a set-to-none step
  bool foreach_optimizer = false;     // one op over a list instead of one per parameter
};

// Steps #2 and #3 (set to none, then zeroing), each with the five phase regions.
Profile training(const StepOptions& o = {}) {
  std::vector<Event> e;
  for (int n : {2, 3}) {
    const std::int64_t t = n * 1000;
    e.push_back(make_event(("ProfilerStep#" + std::to_string(n)).c_str(), t, t + 900, Category::user_annotation));
    e.push_back(make_event("zero_grad", t + 10, t + 90, Category::user_annotation));
    if (n % 2 == 1 || o.zero_in_none_steps) e.push_back(op("aten::zero_", t + 20, t + 30));
    e.push_back(make_event("forward", t + 100, t + 290, Category::user_annotation));
    e.push_back(op("aten::mm", t + 110, t + 150));
    e.push_back(make_event("loss", t + 300, t + 390, Category::user_annotation));
    e.push_back(make_event("backward", t + 400, t + 690, Category::user_annotation));
    for (int k = 0; k < o.mm_backward; ++k)
      e.push_back(op("MmBackward0", t + 410 + 60 * k, t + 450 + 60 * k, {}, o.backward_thread));
    e.push_back(make_event("optimizer", t + 700, t + 890, Category::user_annotation));
    if (o.foreach_optimizer) {
      e.push_back(op("aten::_foreach_add_", t + 710, t + 780, {{}, {}}));
    } else {
      e.push_back(op("aten::add_", t + 710, t + 740, {{64, 32}, {64, 32}}));
      e.push_back(op("aten::add_", t + 750, t + 780, {{64, 32}, {64, 32}}));
      e.push_back(op("aten::add_", t + 790, t + 820, {{32, 64}, {32, 64}}));
    }
  }
  return Profile(std::move(e));
}

const std::vector<std::vector<std::int64_t>> kShapes{{64, 32}, {64, 32}, {32, 64}};

}  // namespace

TEST_CASE("one MmBackward0 per forward GEMM: NOT shown with a node missing") {
  CHECK(f08::one_mm_backward_per_gemm(training(), 3).holds);
  StepOptions missing;
  missing.mm_backward = 2;
  CHECK_FALSE(f08::one_mm_backward_per_gemm(training(missing), 3).holds);
  CHECK_FALSE(f08::one_mm_backward_per_gemm(Profile{}, 3).holds);  // no steps: nothing shown
}

TEST_CASE("backward on the caller's thread: NOT shown when its ops ran elsewhere") {
  CHECK(f08::backward_on_callers_thread(training()).holds);
  StepOptions elsewhere;
  elsewhere.backward_thread = 9;
  CHECK_FALSE(f08::backward_on_callers_thread(training(elsewhere)).holds);
}

TEST_CASE("an autograd node is counted once: the engine's evaluate_function around it is not a node") {
  CHECK(f08::is_autograd_node("MmBackward0"));
  CHECK(f08::is_autograd_node("torch::autograd::AccumulateGrad"));
  CHECK_FALSE(f08::is_autograd_node("autograd::engine::evaluate_function: MmBackward0"));
  CHECK_FALSE(f08::is_autograd_node("aten::mm"));
  // Each step's 3 nodes, each inside its evaluate_function wrapper: 6 nodes over the 2 steps.
  std::vector<Event> e;
  for (int n : {2, 3}) {
    const std::int64_t t = n * 1000;
    e.push_back(make_event(("ProfilerStep#" + std::to_string(n)).c_str(), t, t + 900, Category::user_annotation));
    e.push_back(make_event("forward", t + 100, t + 290, Category::user_annotation));
    e.push_back(make_event("backward", t + 400, t + 690, Category::user_annotation));
    for (int k = 0; k < 3; ++k) {
      e.push_back(op("autograd::engine::evaluate_function: MmBackward0", t + 410 + 60 * k, t + 460 + 60 * k));
      e.push_back(op("MmBackward0", t + 415 + 60 * k, t + 455 + 60 * k));
    }
  }
  const auto f = f08::backward_on_callers_thread(Profile(std::move(e)));
  CHECK(f.holds);
  CHECK(f.evidence.find("autograd nodes during backward: 6,") != std::string::npos);
}

TEST_CASE("set_to_none runs no op: NOT shown when a set-to-none step zeroes") {
  CHECK(f08::zero_grad_forms(training()).holds);
  StepOptions zeroes;
  zeroes.zero_in_none_steps = true;
  const auto counter = f08::zero_grad_forms(training(zeroes));
  CHECK_FALSE(counter.holds);
  CHECK(counter.evidence == "aten::zero_ in set-to-none steps: 1, in zeroing steps: 1");
}

TEST_CASE("parameter by parameter: NOT shown for a foreach op over a list, or a parameter left out") {
  CHECK(f08::optimizer_per_parameter(training(), kShapes).holds);
  StepOptions foreach;
  foreach
    .foreach_optimizer = true;
  CHECK_FALSE(f08::optimizer_per_parameter(training(foreach), kShapes).holds);
  // A fourth parameter the optimizer never touched.
  CHECK_FALSE(f08::optimizer_per_parameter(training(), {{64, 32}, {64, 32}, {32, 64}, {7}}).holds);
}
