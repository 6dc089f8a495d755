// Lesson 02's sentences on hand-made sweeps: each says what the numbers show, either way.
#include <doctest/doctest.h>

#include <stdexcept>

#include "workbook/findings/02_scale.h"

namespace f02 = workbook::findings02;

namespace {

std::vector<f02::SizePoint> sweep(std::vector<double> busy) {
  std::vector<f02::SizePoint> points;
  std::int64_t n = 64;
  for (double b : busy) {
    points.push_back({n, 100.0, 60.0, b});
    n *= 2;
  }
  return points;
}

}  // namespace

TEST_CASE("the busy fraction 'climbs' only when it did, with the crossover when there is one") {
  const std::string up = f02::busy_fraction_trend(sweep({0.1, 0.3, 0.6, 0.9}));
  CHECK(up == "here the busy fraction climbs from 0.10 at n = 64 to 0.90 at n = 512, compute-bound from n = 256");
  CHECK(f02::busy_fraction_trend(sweep({0.1, 0.2, 0.4})).find("without reaching one half") != std::string::npos);
  const std::string flat = f02::busy_fraction_trend(sweep({0.4, 0.3, 0.2}));
  CHECK(flat.find("did not climb") != std::string::npos);
  CHECK(flat.find("climbs") == std::string::npos);
  CHECK(f02::busy_fraction_trend(sweep({0.4})).find("did not climb") != std::string::npos);
  // The lesson's first size is the fixed cost itself: its 0 is said to be a definition.
  CHECK(f02::busy_fraction_trend(sweep({0.0, 0.6})).find("0.00 at n = 64 (zero by definition") != std::string::npos);
}

TEST_CASE("a busy fraction that falls on the way is not said to climb") {
  const std::string dip = f02::busy_fraction_trend(sweep({0.1, 0.8, 0.5, 0.9}));
  CHECK(dip.find("not steadily") != std::string::npos);
  CHECK(dip.find("fell from 0.80 at n = 128 to 0.50 at n = 256") != std::string::npos);
}

TEST_CASE("a size slower than a larger one is named as disturbed; none, nothing said") {
  std::vector<f02::SizePoint> points{
      {64, 300, 5, 0.1}, {128, 3869.1, 100, 0.9}, {256, 3345.7, 100, 0.9}, {512, 9000, 100, 1}};
  const std::string said = f02::disturbed_sizes(points);
  CHECK(said.rfind("n = 128 took longer than n = 256 (3869.1 against 3345.7 us)", 0) == 0);
  CHECK(said.find("Rerun on a quiet machine") != std::string::npos);
  points[1].step_us =
      3400;  // within 5 % of the larger size's (and at 1.23 GFLOP/s, not below half of n = 64's 1.75): noise, not named
  CHECK(f02::disturbed_sizes(points).empty());
}

TEST_CASE("a size whose GEMM rate fell below half a smaller size's is named as disturbed, though it took longer") {
  // n = 64 at 23 us is 22.80 GFLOP/s; n = 128 at 5305.5 us is 0.79: 8x the flops in 231x the time.
  std::vector<f02::SizePoint> points{{64, 23.0, 10, 0.5}, {128, 5305.5, 100, 0.99}};
  const std::string said = f02::disturbed_sizes(points);
  CHECK(said.rfind("n = 128 ran at 0.79 GFLOP/s against 22.80 at n = 64 (8x the flops took 231x the time)", 0) == 0);
  CHECK(said.find("Rerun on a quiet machine") != std::string::npos);
  points[1].step_us = 482;  // 8.70 GFLOP/s: below half of 22.80, named
  CHECK_FALSE(f02::disturbed_sizes(points).empty());
  points[1].step_us = 320;  // 13.11 GFLOP/s: above half of 22.80, the rate's ordinary climb: not named
  CHECK(f02::disturbed_sizes(points).empty());
}

TEST_CASE("the crossover beside the A100: the first compute-bound size, or none") {
  CHECK(f02::crossover_against_the_a100(sweep({0.1, 0.6, 0.4, 0.9}))
            .rfind("Here the first compute-bound size is n = 128", 0) == 0);
  CHECK(f02::crossover_against_the_a100(sweep({0.1, 0.2})).rfind("No size up to n = 128 was compute-bound", 0) == 0);
}

TEST_CASE("the smallest size's self time: its share of the step and the arithmetic it needs") {
  // n = 64 at 100 GFLOP/s: 2 * 64^3 flops take 5.243 us.
  CHECK(f02::small_size_self_share(sweep({0.1}), 100) ==
        "at n = 64 the 'mm+add self' column is 60% of the step (60.00 of 100.00 us), while the GEMM's arithmetic needs "
        "5.243 us at the ceiling");
  CHECK_THROWS_AS(f02::small_size_self_share({}, 100), std::invalid_argument);
}

TEST_CASE("the smallest size overhead-bound, and the first compute-bound size: shown and NOT shown") {
  CHECK(f02::smallest_size_overhead_bound(sweep({0.1, 0.6})).holds);
  CHECK_FALSE(f02::smallest_size_overhead_bound(sweep({0.7, 0.9})).holds);
  CHECK_THROWS_AS(f02::smallest_size_overhead_bound({}), std::invalid_argument);
  CHECK(f02::first_compute_bound_size(sweep({0.1, 0.3, 0.5, 0.9})) == 256);  // one half counts
  CHECK(f02::first_compute_bound_size(sweep({0.1, 0.3})) == 0);
}
