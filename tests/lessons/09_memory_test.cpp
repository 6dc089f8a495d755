// Checks of exercise 09: predicted training-step peaks against steps recorded with
// profile_memory at shapes lesson 09 never runs, both with hidden > dim and with dim > hidden.
#include "workbook_doctest.h"

#include <cstdlib>

#include "09_memory.h"
#include "workbook/profiler/session.h"
#include "workbook/support/training_memory.h"

namespace {

// The recorded peak above the forward's start, the same in every recorded step.
std::int64_t measured_peak(const exercises::StepShapes& s) {
  torch::manual_seed(9);
  workbook::Geglu model(s.dim, s.hidden);
  const auto x = torch::randn({s.tokens, s.dim}), target = torch::randn({s.tokens, s.dim});
  const auto profile = workbook::record_training_steps(model, x, target, 1, 2);
  const auto steps = workbook::step_memory(profile, workbook::memory_timeline(profile));
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].peak_above_forward == steps[1].peak_above_forward);
  return steps[1].peak_above_forward;
}

void check_prediction(const exercises::StepShapes& s) {
  CAPTURE(s.tokens);
  CAPTURE(s.dim);
  CAPTURE(s.hidden);
  const std::int64_t measured = measured_peak(s), predicted = exercises::predict_training_peak_bytes(s);
  CAPTURE(measured);
  CAPTURE(predicted);
  // 1 %: the buffers counted exactly land within a few bytes; a unit slip (KiB x 1000 is 2.3 % off)
  // or one buffer too many is caught.
  CHECK(double(predicted) == doctest::Approx(double(measured)).epsilon(0.01));
}

}  // namespace

TEST_CASE("the prediction holds where hidden is wider than the model") {
  check_prediction({64, 128, 512});
  check_prediction({200, 96, 384});
}

TEST_CASE("the prediction holds where the model is wider than hidden") { check_prediction({256, 192, 96}); }

TEST_CASE("the prediction holds where the weights outweigh the activations") { check_prediction({16, 256, 512}); }

// Hidden 16x the model width: a node's frees that are off by one [T, hidden] buffer move the
// peak by 7.7 %, beyond the 1 % allowed.
TEST_CASE("the prediction holds where hidden is much wider than the model") { check_prediction({16, 64, 1024}); }

TEST_CASE("the prediction holds where the model is wide: x is an input, it gets no gradient") {
  check_prediction({64, 1024, 256});
  check_prediction({512, 1024, 1024});
}

// Tiny shapes: a slip of order dim or hidden (a bias gradient the model does not have, a [hidden]
// buffer) is several percent of the peak here, where large shapes hide it under 1 %.
TEST_CASE("the prediction holds at an odd shape no other check uses") { check_prediction({33, 77, 300}); }

TEST_CASE("the prediction is arithmetic: nothing runs, and a 2.6 GB step does not overflow") {
  {
    // A tiny shape first: an answer that runs a step is caught here, before it builds a 2.6 GB one.
    workbook::Session tiny;
    (void)exercises::predict_training_peak_bytes({4, 8, 16});
    REQUIRE(tiny.finish().of_category(workbook::Category::cpu_op).empty());
  }
  workbook::Session session;  // records whatever the prediction would run (and a second session cannot start)
  const std::int64_t large = exercises::predict_training_peak_bytes({8192, 4096, 11008});
  // Counted in elements, 13.6 G of them at T 65536, D 4096, H 32768: past 32 bits before the x 4.
  const std::int64_t larger = exercises::predict_training_peak_bytes({65536, 4096, 32768});
  // T·H = 2^32 elements at T 131072: an int overflows well before, 32 unsigned bits wrap to 0 (trial 30).
  const std::int64_t largest = exercises::predict_training_peak_bytes({131072, 4096, 32768});
  // Odd sizes: counted in float, 1.4 G elements lose their last bits (trial 19: 28 bytes short).
  const std::int64_t odd = exercises::predict_training_peak_bytes({4097, 4099, 11001});
  // T·H past 2^53 with odd sizes: a count kept in double loses its last bits (trial 37: 92 bytes short).
  const std::int64_t past_double = exercises::predict_training_peak_bytes({300000007, 3, 300000001});
  // The other two nodes' peaks, exact at large shapes too (trial 44): gate's (T·H + 2·T·D + 3·D·H,
  // the weights far larger than the activations) and down's (5·T·H + 3·T·D + D·H, dim wider than hidden).
  const std::int64_t gate_peak = exercises::predict_training_peak_bytes({8, 65536, 65536});
  const std::int64_t down_peak = exercises::predict_training_peak_bytes({65537, 32771, 4099});
  const workbook::Profile p = session.finish();
  // The model the recorded checks above confirm, at a size no test machine should run: the same
  // sequence of nodes gives 4 x 653 262 848 bytes. Within 16 bytes, as the contract's "a few bytes":
  // a scalar buffer (the loss, 4 bytes) counted or not is right either way; float's lost bits
  // (28 bytes at odd) and any unit slip are not.
  auto within_a_few_bytes = [](std::int64_t got, std::int64_t wanted) {
    INFO("wanted " << wanted << " bytes, give or take 16; got " << got << " (" << got - wanted << ")");
    CHECK(std::abs(got - wanted) <= 16);
  };
  within_a_few_bytes(large, 2613051392);
  within_a_few_bytes(larger, 54223962112);
  within_a_few_bytes(largest, 107911053312);
  within_a_few_bytes(odd, 1396427548);
  within_a_few_bytes(past_double, 2160000068400000348);
  within_a_few_bytes(gate_peak, 51545899008);
  within_a_few_bytes(down_peak, 31682592900);
  CHECK(p.of_category(workbook::Category::cpu_op).empty());
}

TEST_CASE("the prediction holds at tiny shapes, where every vector counts") {
  check_prediction({4, 8, 16});
  check_prediction({2, 16, 8});
  check_prediction({1024, 4, 4});  // narrow: a buffer per token (a [T] vector) is 3 % of the peak here
}

TEST_CASE("an empty batch still peaks: backward makes the three weight gradients, all zero") {
  check_prediction({0, 64, 128});
}

TEST_CASE("the prediction holds where tokens and hidden are alike and the model is much wider") {
  check_prediction({64, 256, 64});
  check_prediction({16, 256, 8});
}
