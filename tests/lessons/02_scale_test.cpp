// Checks of exercise 02: the fit on synthetic data built so that right and wrong fits differ by a
// wide margin (no check here depends on this machine's speed: `./workbook run 2` measures it).
#include "workbook_doctest.h"

#include <cmath>
#include <stdexcept>

#include "02_scale.h"

TEST_CASE("the fit recovers an exact model and predicts its crossover") {
  exercises::StepModel truth;
  truth.fixed_us = 12;
  truth.per_n2_us = 2e-3;
  truth.per_n3_us = 4e-5;
  std::vector<std::pair<std::int64_t, double>> points;
  for (std::int64_t n : {8, 16, 24, 32, 48}) points.emplace_back(n, truth.predict_us(n));
  const auto fit = exercises::fit_step_model(points);
  CHECK(fit.fixed_us == doctest::Approx(12).epsilon(1e-6));
  CHECK(fit.per_n2_us == doctest::Approx(2e-3).epsilon(1e-6));
  CHECK(fit.per_n3_us == doctest::Approx(4e-5).epsilon(1e-6));
  // The fit is least squares, whatever the signs: a negative intercept (noise at small sizes does
  // that) comes back as it is, not clamped to 0.
  exercises::StepModel negative;
  negative.fixed_us = -1;
  negative.per_n2_us = 0.1;
  negative.per_n3_us = 1e-4;
  std::vector<std::pair<std::int64_t, double>> exact;
  for (std::int64_t n : {8, 16, 24, 32, 48}) exact.emplace_back(n, negative.predict_us(n));
  CHECK(exercises::fit_step_model(exact).fixed_us == doctest::Approx(-1).epsilon(1e-6));
  CHECK(truth.busy_fraction(16) == doctest::Approx((2e-3 * 256 + 4e-5 * 4096) / truth.predict_us(16)));
  // 2e-3 n^2 + 4e-5 n^3 = 12 between n = 32 (3.4 us) and n = 64 (18.7 us): the crossover is 64.
  CHECK(exercises::predicted_crossover(truth, 8, 4096) == 64);
  CHECK(exercises::predicted_crossover(truth, 8, 32) == 0);
  CHECK(exercises::predicted_crossover(truth, 100, 4096) == 128);
  CHECK(exercises::predicted_crossover(truth, 8, 64) == 64);    // hi itself is in [lo, hi]
  CHECK(exercises::predicted_crossover(truth, 100, 120) == 0);  // no power of two in [100, 120]: 128 is past hi
}

TEST_CASE("predicted crossover: the first power of two at or above lo, scanned up to hi") {
  exercises::StepModel truth;
  truth.fixed_us = 12;
  truth.per_n2_us = 2e-3;
  truth.per_n3_us = 4e-5;
  // 64 is compute-bound, but below lo = 90: the first power of two in [90, 4096] is 128.
  CHECK(exercises::predicted_crossover(truth, 90, 4096) == 128);
  // A noisy fit can give a negative cubic term: the busy fraction rises (0.61 at n = 4), then falls
  // below zero at large n. The first power of two that reaches one half is still the answer.
  exercises::StepModel rises_then_falls;
  rises_then_falls.fixed_us = 10;
  rises_then_falls.per_n2_us = 1.0;
  rises_then_falls.per_n3_us = -1e-3;
  CHECK(exercises::predicted_crossover(rises_then_falls, 1, 4096) == 4);
  // Sizes past 2^21, where n^3 overflows 64-bit integers and a shift of an int overflows 32 bits:
  // a model compute-bound only from 2^25 on, and a range that starts just past 2^31.
  exercises::StepModel huge;
  huge.fixed_us = 1e12;
  huge.per_n3_us = 1e-10;
  const double n22 = double(std::int64_t(1) << 22);
  CHECK(huge.predict_us(std::int64_t(1) << 22) == doctest::Approx(1e12 + 1e-10 * n22 * n22 * n22));
  CHECK(exercises::predicted_crossover(huge, 1, std::int64_t(1) << 30) == (std::int64_t(1) << 25));
  CHECK(exercises::predicted_crossover(truth, (std::int64_t(1) << 31) + 1, std::int64_t(1) << 40) ==
        (std::int64_t(1) << 32));
  // Past 2^49 a double's log2 rounds 2^49 + 1 down to exactly 49: the first power at or above lo
  // is 2^50, never 2^49 (which is below lo).
  CHECK(exercises::predicted_crossover(truth, (std::int64_t(1) << 49) + 1, std::int64_t(1) << 60) ==
        (std::int64_t(1) << 50));
}

TEST_CASE("relative least squares: noisy large sizes do not pull the small fixed cost off") {
  // Exact small steps, large ones with +-6 % noise. Plain least squares lets the large sizes'
  // absolute errors (tens of us) move the fixed cost by 14 %; relative weights keep it within 2 %.
  exercises::StepModel truth;
  truth.fixed_us = 10;
  truth.per_n3_us = 1e-5;
  std::vector<std::pair<std::int64_t, double>> points;
  for (auto [n, wobble] : std::vector<std::pair<std::int64_t, double>>{
           {8, 1}, {16, 1}, {24, 1}, {32, 1}, {256, 1.06}, {320, 0.94}, {384, 1.06}, {448, 0.94}})
    points.emplace_back(n, truth.predict_us(n) * wobble);
  CHECK(exercises::fit_step_model(points).fixed_us == doctest::Approx(10).epsilon(0.05));
}

TEST_CASE("the weights are 1 / step squared: every point's relative error counts the same") {
  // Exact small steps (8 to 64) and large ones 1024 to 1792 with +-10 % noise. Weighted by
  // 1 / step^2 the fixed cost comes out within 0.5 %; weighted by 1 / step, the large steps
  // still dominate and it is off by 37 %.
  exercises::StepModel truth;
  truth.fixed_us = 10;
  truth.per_n3_us = 1e-5;
  std::vector<std::pair<std::int64_t, double>> points;
  for (std::int64_t n : {8, 16, 24, 32, 48, 64}) points.emplace_back(n, truth.predict_us(n));
  for (auto [n, wobble] :
       std::vector<std::pair<std::int64_t, double>>{{1024, 1.1}, {1280, 0.9}, {1536, 1.1}, {1792, 0.9}})
    points.emplace_back(n, truth.predict_us(n) * wobble);
  CHECK(exercises::fit_step_model(points).fixed_us == doctest::Approx(10).epsilon(0.02));
}

TEST_CASE("the crossover is where the busy fraction reaches one half, exactly one half included") {
  // 2 n^3 = 1024 at n = 8: the busy fraction is exactly 0.5 there.
  exercises::StepModel edge;
  edge.fixed_us = 1024;
  edge.per_n3_us = 2;
  CHECK(edge.busy_fraction(8) == 0.5);
  CHECK(exercises::predicted_crossover(edge, 1, 64) == 8);
  CHECK(exercises::predicted_crossover(edge, 8, 64) == 8);  // lo itself is in [lo, hi]
}

TEST_CASE("the crossover is a size that is compute-bound: the power of two at or past the point, never the nearest") {
  // The busy fraction reaches one half at n = 40 (1.875e-4 * 40^3 = 12): nearer to 32 than to 64,
  // but at 32 the step is still overhead-bound (busy 0.34).
  exercises::StepModel model;
  model.fixed_us = 12;
  model.per_n3_us = 12.0 / (40.0 * 40.0 * 40.0);
  CHECK(model.busy_fraction(32) < 0.5);
  CHECK(exercises::predicted_crossover(model, 8, 4096) == 64);
}

TEST_CASE("three different sizes are needed, however the repeated ones are ordered") {
  CHECK_THROWS_AS(exercises::fit_step_model({{24, 1.0}, {40, 2.0}, {24, 1.3}, {40, 2.2}}), std::invalid_argument);
}

TEST_CASE(
    "a size of 0 is a size (an empty matrix: the step is the fixed cost), but a negative one or 2^53 is an error") {
  const exercises::StepModel truth{12, 2e-3, 4e-5};
  std::vector<std::pair<std::int64_t, double>> points;
  for (std::int64_t n : {0, 16, 32}) points.emplace_back(n, truth.predict_us(n));
  const auto fit = exercises::fit_step_model(points);
  CHECK(fit.fixed_us == doctest::Approx(12).epsilon(1e-9));
  CHECK(fit.per_n2_us == doctest::Approx(2e-3).epsilon(1e-6));
  CHECK(fit.per_n3_us == doctest::Approx(4e-5).epsilon(1e-6));
  // In any order: the size 0 last (the largest size is the scale, not the last point's).
  const std::vector<std::pair<std::int64_t, double>> zero_last(points.rbegin(), points.rend());
  const auto fit_zero_last = exercises::fit_step_model(zero_last);
  CHECK(fit_zero_last.fixed_us == doctest::Approx(12).epsilon(1e-9));
  CHECK(fit_zero_last.per_n3_us == doctest::Approx(4e-5).epsilon(1e-6));
  CHECK_THROWS_AS(exercises::fit_step_model({{-8, 1.0}, {16, 2.0}, {32, 3.0}}), std::invalid_argument);
  CHECK_THROWS_AS(exercises::fit_step_model({{-16, 1.0}, {-8, 2.0}, {0, 3.0}}), std::invalid_argument);
  // 2^53 itself is out, beside sizes that would determine the model (8 and 16 scaled by 2^53
  // vanish, and the fit would be refused as singular whatever the bound).
  CHECK_THROWS_AS(exercises::fit_step_model(
                      {{std::int64_t(1) << 51, 1.0}, {std::int64_t(1) << 52, 2.0}, {std::int64_t(1) << 53, 3.0}}),
                  std::invalid_argument);
  CHECK_NOTHROW(exercises::fit_step_model(
      {{std::int64_t(1) << 51, 1.0}, {std::int64_t(1) << 52, 2.0}, {(std::int64_t(1) << 53) - 1, 3.0}}));
}

TEST_CASE("a step that is zero or negative is an error") {
  CHECK_THROWS_AS(exercises::fit_step_model({{8, 1.0}, {16, 0.0}, {32, 3.0}}), std::invalid_argument);
  CHECK_THROWS_AS(exercises::fit_step_model({{8, 1.0}, {16, -2.0}, {32, 3.0}}), std::invalid_argument);
  // Not a number is not positive either: a failed measurement must not become a fit of NaNs.
  CHECK_THROWS_AS(exercises::fit_step_model({{8, 1.0}, {16, std::nan("")}, {32, 3.0}}), std::invalid_argument);
}

TEST_CASE("a zero or negative step is an error also when its size is measured again") {
  // Every point is weighted by 1 / step², so one zero step among repeats still divides by zero.
  CHECK_THROWS_AS(exercises::fit_step_model({{16, 0.0}, {16, 1.0}, {32, 2.0}, {64, 5.0}}), std::invalid_argument);
  CHECK_THROWS_AS(exercises::fit_step_model({{16, 1.0}, {16, -1.0}, {32, 2.0}, {64, 5.0}}), std::invalid_argument);
}

TEST_CASE("steps of seconds fit like steps of microseconds: singularity is not an absolute threshold") {
  // The weights are 1 / step²: with steps of 1e6..1e8 us the normal equations' entries are tiny,
  // and a pivot test against a fixed epsilon would refuse these well-determined points.
  CHECK_NOTHROW(exercises::fit_step_model({{1000, 1e6}, {2000, 3e6}, {4000, 2e7}}));
  exercises::StepModel slow;
  slow.fixed_us = 2e5;
  slow.per_n2_us = 0.5;
  slow.per_n3_us = 3e-4;
  std::vector<std::pair<std::int64_t, double>> points;
  for (std::int64_t n : {1000, 2000, 4000, 8000}) points.emplace_back(n, slow.predict_us(n));
  const auto fit = exercises::fit_step_model(points);
  CHECK(fit.fixed_us == doctest::Approx(2e5).epsilon(1e-6));
  CHECK(fit.per_n2_us == doctest::Approx(0.5).epsilon(1e-6));
  CHECK(fit.per_n3_us == doctest::Approx(3e-4).epsilon(1e-6));
}

TEST_CASE("the fit is least squares: noise does not throw it off, too few sizes are an error") {
  exercises::StepModel truth;
  truth.fixed_us = 8;
  truth.per_n3_us = 1e-5;
  std::vector<std::pair<std::int64_t, double>> points;
  for (std::int64_t n : {16, 32, 64, 128})
    for (double wobble : {0.97, 1.03}) points.emplace_back(n, truth.predict_us(n) * wobble);
  const auto fit = exercises::fit_step_model(points);
  CHECK(fit.predict_us(128) == doctest::Approx(truth.predict_us(128)).epsilon(0.03));
  CHECK_THROWS_AS(exercises::fit_step_model({{16, 1.0}, {16, 1.1}, {32, 2.0}}), std::invalid_argument);
  // Four points but two sizes: three unknowns need three distinct sizes, whatever rounding leaves
  // on the diagonal of the solve.
  CHECK_THROWS_AS(exercises::fit_step_model({{24, 1.0}, {24, 1.3}, {40, 2.0}, {40, 2.2}}), std::invalid_argument);
  CHECK_THROWS_AS(exercises::fit_step_model({{24, 1.0}, {24, 1.3}, {24, 1.1}, {40, 2.0}}), std::invalid_argument);
}

TEST_CASE("every point counts, in any order: sizes past the third move the fit, repeated sizes all count") {
  exercises::StepModel truth;
  truth.fixed_us = 10;
  truth.per_n3_us = 1e-5;
  // Exact at 16, 32, 64; 1.5x the model at 128 and 256. The three smallest alone fit the model
  // exactly; all five pull the prediction at 256 up to about 1.56x.
  std::vector<std::pair<std::int64_t, double>> points;
  for (std::int64_t n : {16, 32, 64}) points.emplace_back(n, truth.predict_us(n));
  for (std::int64_t n : {128, 256}) points.emplace_back(n, 1.5 * truth.predict_us(n));
  CHECK(exercises::fit_step_model(points).predict_us(256) > 1.3 * truth.predict_us(256));
  // Two measurements at 16 (0.8x and 1.2x): both count, whichever comes first (keeping only the
  // first moves the fixed cost to 8.2 or 11.4 us; both give 9.26).
  std::vector<std::pair<std::int64_t, double>> repeated{{16, 0.8 * truth.predict_us(16)},
                                                        {16, 1.2 * truth.predict_us(16)}};
  for (std::int64_t n : {32, 64, 128}) repeated.emplace_back(n, truth.predict_us(n));
  auto swapped = repeated;
  std::swap(swapped[0], swapped[1]);
  const auto a = exercises::fit_step_model(repeated), b = exercises::fit_step_model(swapped);
  CHECK(a.fixed_us == doctest::Approx(b.fixed_us).epsilon(1e-9));
  CHECK(a.fixed_us == doctest::Approx(9.26).epsilon(0.01));
}

TEST_CASE("the crossover follows busy_fraction, also for a fit with a negative fixed cost") {
  // A fit may return a negative intercept (the header keeps it as is). At n = 1 and 2 the model's
  // step is below zero, so busy_fraction is 0 there; from n = 4 on the step is positive and the
  // growing part is more than half of it. Comparing the growing part with the fixed cost instead
  // would answer 1.
  const exercises::StepModel negative_fixed{-1.0, 0.1, 1e-4};
  CHECK(negative_fixed.busy_fraction(1) == 0.0);
  CHECK(exercises::predicted_crossover(negative_fixed, 1, 4096) == 4);
  // Where the step is positive the share is the formula's, even outside [0, 1]: a negative fixed
  // cost makes it above 1 (a = -5, b = 1 at n = 2: 8 / 3), a negative
  // growing term below 0 (a = 10, c = -1 at n = 2: -4 / 6). Nothing clamps it.
  CHECK(exercises::StepModel{-5.0, 0.0, 1.0}.busy_fraction(2) == doctest::Approx(8.0 / 3.0));
  CHECK(exercises::StepModel{10.0, -1.0, 0.0}.busy_fraction(2) == doctest::Approx(-4.0 / 6.0));
}

TEST_CASE("a step of exactly zero has a busy fraction of 0, never a division by it") {
  // a = -1, c = 1: step(1) = 0 exactly. Its share is 0 (the header's "step(n) <= 0"), so n = 1 is
  // not compute-bound; at n = 2 the step is 3 and the growing part 4: the crossover is 2.
  const exercises::StepModel zero_at_one{-1.0, 1.0, 0.0};
  CHECK(zero_at_one.busy_fraction(1) == 0.0);
  CHECK(exercises::predicted_crossover(zero_at_one, 1, 4096) == 2);
  CHECK(exercises::StepModel{}.busy_fraction(4) == 0.0);  // the all-zero model: 0, not 0 / 0
}

TEST_CASE("a tiny positive step is still a step: only step <= 0 has a busy fraction of 0") {
  // step(1) = -1 + (1 + 1e-10) = 1e-10 us: positive, so its share is (step - fixed) / step, huge.
  exercises::StepModel tiny;
  tiny.fixed_us = -1;
  tiny.per_n2_us = 1 + 1e-10;
  CHECK(tiny.predict_us(1) > 0);
  CHECK(tiny.busy_fraction(1) > 1e9);
  CHECK(exercises::predicted_crossover(tiny, 1, 8) == 1);
}

TEST_CASE("a model compute-bound already at n = 1 answers 1: 2^0 is a power of two") {
  // a = 1, c = 1: at n = 1 the growing part is exactly half of the step.
  CHECK(exercises::predicted_crossover(exercises::StepModel{1.0, 1.0, 0.0}, 1, 4096) == 1);
  CHECK(exercises::predicted_crossover(exercises::StepModel{1.0, 1.0, 0.0}, 1, 1) == 1);
}

TEST_CASE("negative n^2 or n^3 costs come back as the fit finds them, not clamped") {
  // Exact points of models with one negative term (every step still positive): least squares
  // recovers them, whatever the sign.
  for (const exercises::StepModel& truth :
       {exercises::StepModel{10, -0.001, 1e-5}, exercises::StepModel{10, 0.1, -1e-4}}) {
    CAPTURE(truth.per_n2_us);
    CAPTURE(truth.per_n3_us);
    std::vector<std::pair<std::int64_t, double>> points;
    for (std::int64_t n : {8, 16, 24, 32, 48, 64}) points.emplace_back(n, truth.predict_us(n));
    const auto fit = exercises::fit_step_model(points);
    CHECK(fit.per_n2_us == doctest::Approx(truth.per_n2_us).epsilon(1e-6));
    CHECK(fit.per_n3_us == doctest::Approx(truth.per_n3_us).epsilon(1e-6));
  }
}

TEST_CASE("sizes past 2^21 and 2^32: n^2 and n^3 are never taken in 64-bit integers (trial 33)") {
  // n^3 overflows int64 past 2^21; n^2 wraps unsigned 64 bits at 2^32. An exact model fits back
  // from sizes 2^20 to 2^23, and the n^2 term alone decides the crossover at 2^32.
  const exercises::StepModel truth{12.5, 2e-3, 4e-9};
  std::vector<std::pair<std::int64_t, double>> points;
  for (int k = 20; k <= 23; ++k) points.emplace_back(std::int64_t(1) << k, truth.predict_us(std::int64_t(1) << k));
  const auto fit = exercises::fit_step_model(points);
  CHECK(fit.per_n3_us == doctest::Approx(truth.per_n3_us).epsilon(1e-6));
  CHECK(fit.per_n2_us == doctest::Approx(truth.per_n2_us).epsilon(1e-3));
  CHECK(exercises::predicted_crossover(exercises::StepModel{1e12, 1, 0}, (std::int64_t(1) << 31) + 1,
                                       std::int64_t(1) << 40) == (std::int64_t(1) << 32));
  // Sizes past 2^31 are distinct sizes, and fit like small ones (an int keeps none of them apart).
  std::vector<std::pair<std::int64_t, double>> past_int;
  for (int k = 32; k <= 35; ++k) past_int.emplace_back(std::int64_t(1) << k, truth.predict_us(std::int64_t(1) << k));
  const auto fit_past_int = exercises::fit_step_model(past_int);
  CHECK(fit_past_int.per_n3_us == doctest::Approx(truth.per_n3_us).epsilon(1e-6));
  CHECK(fit_past_int.per_n2_us == doctest::Approx(truth.per_n2_us).epsilon(1e-3));
}

TEST_CASE("sizes are exact as doubles, odd ones past 2^24 too (a float would round them)") {
  // (2^24 + 1)^2 = 2^48 + 2^25 + 1 needs 49 bits: exact in a double. A size passed through a
  // float becomes 2^24 (24 bits of mantissa), and the step loses 2^25 + 1.
  const std::int64_t odd = (std::int64_t(1) << 24) + 1;
  const double exact = 281474976710656.0 + 33554433.0;
  CHECK(exercises::StepModel{0, 1, 0}.predict_us(odd) - exact == 0);  // (the difference shows when not)
  CHECK(exercises::StepModel{5, 0, 0}.predict_us(odd) == 5);
}

TEST_CASE("the scan reaches every power of two up to hi < 2^62: 2^61 too") {
  // b n^3 >= fixed first at n = 2^61 (2^183 against 2^182): the largest power of two the contract's
  // range holds.
  const exercises::StepModel model{std::ldexp(1.0, 182), 0, 1};
  const std::int64_t below_2_pow_62 = (std::int64_t(1) << 62) - 1;
  CHECK(exercises::predicted_crossover(model, 1, below_2_pow_62) == (std::int64_t(1) << 61));
  CHECK(exercises::predicted_crossover(model, std::int64_t(1) << 60, below_2_pow_62) == (std::int64_t(1) << 61));
  CHECK(exercises::predicted_crossover(model, 1, (std::int64_t(1) << 61) - 1) == 0);
  // Past 2^61 the range holds no power of two: 2^61 itself lies below lo (trial 42).
  CHECK(exercises::predicted_crossover(model, (std::int64_t(1) << 61) + 1, below_2_pow_62) == 0);
}

TEST_CASE("just below one half is not one half: no tolerance in the comparison") {
  // busy_fraction(8) = 0.5 - 5e-11 (b n^3 = 1024 - 2e-7 against a fixed 1024): 8 is not yet
  // compute-bound, 16 is.
  const exercises::StepModel model{1024, 0, 2 - 4e-10};
  REQUIRE(model.busy_fraction(8) < 0.5);
  CHECK(exercises::predicted_crossover(model, 1, 64) == 16);
}

TEST_CASE("the crossover scan goes on past a size whose busy fraction fell") {
  // {10, -1, 0.01}: the busy fraction falls from n = 1 to 2, the step is negative up to 64, and
  // n = 128 is the first compute-bound size.
  CHECK(exercises::predicted_crossover(exercises::StepModel{10, -1, 0.01}, 1, 4096) == 128);
}

TEST_CASE("two identical measurements are two terms of the sum, as two that differ by a hair are") {
  // Four sizes, five points: the repeated (16, 20) weighs twice in the fit. Deduplicated, the fit
  // moves by far more than the tolerance (fixed_us 19.3 instead of 18.8).
  const std::vector<std::pair<std::int64_t, double>> twice{{16, 20}, {16, 20}, {32, 30}, {64, 60}, {128, 300}};
  auto nearly = twice;
  nearly[1].second = 20 * (1 + 1e-12);
  auto once = twice;
  once.erase(once.begin() + 1);
  const auto fit = exercises::fit_step_model(twice);
  CHECK(fit.fixed_us == doctest::Approx(exercises::fit_step_model(nearly).fixed_us).epsilon(1e-6));
  CHECK(fit.per_n3_us == doctest::Approx(exercises::fit_step_model(nearly).per_n3_us).epsilon(1e-6));
  CHECK(std::abs(fit.fixed_us - exercises::fit_step_model(once).fixed_us) > 0.1);  // the repeat matters here
}

TEST_CASE("with three sizes, a size measured twice counts twice, weighted: not through the two steps' mean") {
  // Three sizes and three terms: the fit passes through sizes 32 and 64, and at 16 minimises the
  // two relative errors: (10/10^2 + 14/14^2) / (1/10^2 + 1/14^2) = 11.35, not their mean, 12.
  const auto fit = exercises::fit_step_model({{16, 10}, {16, 14}, {32, 20}, {64, 50}});
  const double weighted = (10.0 / 100 + 14.0 / 196) / (1.0 / 100 + 1.0 / 196);
  CHECK(fit.predict_us(16) == doctest::Approx(weighted).epsilon(1e-6));
  CHECK(fit.predict_us(32) == doctest::Approx(20).epsilon(1e-6));
}

TEST_CASE("three sizes far apart determine the model exactly: no pivot refused for being small, no size rounded") {
  // a + c n^2 + b n^3 vanishes at most twice for n >= 0, so three distinct sizes give a regular
  // system however far apart they are: its pivots can be 1e-30 of its largest entry, and the exact
  // model still comes back. Only an exactly zero pivot is "the sizes do not determine the model".
  const exercises::StepModel truth{12, 2e-3, 4e-5};
  const std::vector<std::vector<std::int64_t>> spreads{
      {16, 32, 65536}, {1, 2, std::int64_t(1) << 20}, {0, 1, std::int64_t(1) << 40}, {7, 100003, 300007}};
  for (const auto& sizes : spreads) {
    CAPTURE(sizes.back());
    std::vector<std::pair<std::int64_t, double>> points;
    for (std::int64_t n : sizes) points.emplace_back(n, truth.predict_us(n));
    exercises::StepModel fit;
    REQUIRE_NOTHROW(fit = exercises::fit_step_model(points));
    CHECK(fit.fixed_us == doctest::Approx(truth.fixed_us).epsilon(1e-6));
    CHECK(fit.per_n2_us == doctest::Approx(truth.per_n2_us).epsilon(1e-6));
    CHECK(fit.per_n3_us == doctest::Approx(truth.per_n3_us).epsilon(1e-6));
  }
}
