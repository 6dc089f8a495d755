// Lesson 12's findings: collectives per step and overlap from hooks, shown and NOT shown.
#include <doctest/doctest.h>

#include "workbook/findings/12_data_parallel.h"

namespace f12 = workbook::findings12;

namespace {

// A rank whose steps each ran `calls` all-reduces, with `overlapped` of 100 ns communication hidden.
f12::RankSteps rank(std::vector<std::size_t> calls, std::int64_t overlapped) {
  f12::RankSteps r;
  for (std::size_t c : calls) {
    workbook::StepCommunication s;
    s.communication_ns = 100;
    s.overlapped_ns = overlapped;
    r.steps.push_back(s);
    r.collective_calls.push_back(c);
  }
  return r;
}

}  // namespace

TEST_CASE("collectives per step: shown when every step of every rank ran the expected count") {
  const f12::WayOnRanks way{"each_gradient", {rank({3, 3}, 0), rank({3, 3}, 0)}};
  CHECK(f12::collectives_per_step(way, 3, "each gradient").holds);
}

TEST_CASE("collectives per step: NOT shown when one step of one rank differs, or nothing was recorded") {
  const f12::WayOnRanks way{"each_gradient", {rank({3, 3}, 0), rank({3, 4}, 0)}};
  const auto f = f12::collectives_per_step(way, 3, "each gradient");
  CHECK_FALSE(f.holds);
  CHECK(f.evidence.find("rank 1 ran 4") != std::string::npos);
  CHECK_FALSE(f12::collectives_per_step(f12::WayOnRanks{"x", {}}, 3, "x").holds);
}

TEST_CASE("overlap from hooks: shown when over all ranks the hooked way hides 5 points more than each other") {
  const f12::WayOnRanks after{"each_gradient", {rank({3}, 0), rank({3}, 5)}};
  const f12::WayOnRanks flat{"flat_bucket", {rank({1}, 0), rank({1}, 0)}};
  const f12::WayOnRanks hooked{"overlapped", {rank({3}, 40), rank({3}, 2)}};
  const auto f = f12::overlap_only_from_hooks({after, flat}, hooked);
  CHECK(f.holds);
  CHECK(f.evidence ==
        "all ranks: 21% from hooks, 2% each_gradient, 0% flat_bucket; rank 0: 40% from hooks; rank 1: 2% "
        "from hooks");
}

TEST_CASE("overlap from hooks: NOT shown when over all ranks it hides less than 5 points more, or nothing") {
  const f12::WayOnRanks after{"each_gradient", {rank({3}, 0), rank({3}, 20)}};
  CHECK_FALSE(
      f12::overlap_only_from_hooks({after}, f12::WayOnRanks{"overlapped", {rank({3}, 20), rank({3}, 0)}}).holds);
  CHECK_FALSE(
      f12::overlap_only_from_hooks({after}, f12::WayOnRanks{"overlapped", {rank({3}, 14), rank({3}, 10)}}).holds);
  CHECK_FALSE(f12::overlap_only_from_hooks({after}, f12::WayOnRanks{"overlapped", {}}).holds);
  CHECK_FALSE(f12::overlap_only_from_hooks({}, f12::WayOnRanks{"overlapped", {rank({3}, 40)}}).holds);
}
