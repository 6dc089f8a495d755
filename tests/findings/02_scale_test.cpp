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
}

TEST_CASE("the crossover beside the A100: the first compute-bound size, or none") {
  CHECK(f02::crossover_against_the_a100(sweep({0.1, 0.6, 0.4, 0.9}))
            .rfind("Here the first compute-bound size is n = 128", 0) == 0);
  CHECK(f02::crossover_against_the_a100(sweep({0.1, 0.2})).rfind("No size up to n = 128 was compute-bound", 0) == 0);
}

TEST_CASE("the smallest size's self time: its share of the step and the arithmetic it needs") {
  // n = 64 at 100 GFLOP/s: 2 * 64^3 flops take 5.243 us.
  CHECK(f02::small_size_self_share(sweep({0.1}), 100) ==
        "at n = 64 the 'mm+add self' column is 60% of the step (60.0 of 100.0 us), while the GEMM's arithmetic needs "
        "5.243 us at the ceiling");
  CHECK_THROWS_AS(f02::small_size_self_share({}, 100), std::invalid_argument);
}
