// Lesson 07's findings on hand-made timings: each shown where the run bears it out, NOT shown
// where it does not, and a way that did not run is an error, never "fast".
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "workbook/findings/07_bias_epilogue.h"

namespace f07 = workbook::findings07;

TEST_CASE("the separate bias kernel costs time: shown when (a) is slower than (b), NOT shown otherwise") {
  const f07::WayTimes slower_a{120.0, 100.0, 300.0, 15.0};
  const workbook::Finding shown = f07::separate_bias_kernel_costs(slower_a);
  CHECK(shown.holds);
  CHECK(shown.evidence ==
        "medians: (a) GEMM then bias kernel 120.0 us, (b) bias epilogue 100.0 us: (a) - (b) = 20.0 us; the bias kernel "
        "alone 15.0 us");
  CHECK_FALSE(f07::separate_bias_kernel_costs({100.0, 100.0, 300.0, 15.0}).holds);  // equal: no cost shown
  CHECK_FALSE(f07::separate_bias_kernel_costs({90.0, 100.0, 300.0, 15.0}).holds);
  CHECK_THROWS_AS(f07::separate_bias_kernel_costs({0.0, 100.0, 300.0, 15.0}), std::invalid_argument);
}

TEST_CASE("the tiled kernel against the library: slower only when it was") {
  CHECK(f07::tiled_against_library({120.0, 100.0, 300.0, 15.0}).find("Here it took 3.0x the time of (b)") == 0);
  const std::string not_slower = f07::tiled_against_library({120.0, 100.0, 90.0, 15.0});
  CHECK(not_slower.find("was not slower than (b) (90.0 against 100.0 us)") != std::string::npos);
  CHECK(not_slower.find("no match") == std::string::npos);
  CHECK_THROWS_AS(f07::tiled_against_library({120.0, 100.0, -1.0, 15.0}), std::invalid_argument);
}

TEST_CASE("the tiled kernel slower than the library: shown when (c) is above (b), NOT shown otherwise") {
  CHECK(f07::tiled_slower_than_library({120.0, 100.0, 300.0, 15.0}).holds);
  CHECK_FALSE(f07::tiled_slower_than_library({120.0, 100.0, 90.0, 15.0}).holds);
  CHECK_THROWS_AS(f07::tiled_slower_than_library({120.0, 100.0, 0.0, 15.0}), std::invalid_argument);
}
