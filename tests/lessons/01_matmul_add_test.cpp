// Checks of exercise 01, built twice: against the learner's file (./workbook check 1) and
// against the reference solution (the suite).
#include "workbook_doctest.h"

#include <fmt/format.h>
#include <unistd.h>
#include <chrono>

#include "01_matmul_add.h"
#include "workbook/lesson/timing.h"
#include "workbook/profiler/chrome_trace.h"

namespace {

std::filesystem::path fresh_dir(const char* tag) {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("wb-check01-{}-{}", tag, ::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::vector<exercises::CycleGaps> run(const workbook::Schedule& schedule, const std::filesystem::path& dir) {
  torch::manual_seed(1);
  return exercises::profile_cycles(torch::randn({32, 32}), torch::randn({32, 32}), torch::randn({32}), schedule, dir);
}

// Matches a trace's gaps against what was returned, and its structure against the schedule.
void check_cycle(const exercises::CycleGaps& c, int active) {
  REQUIRE(std::filesystem::exists(c.trace));
  const workbook::Profile p = workbook::load_chrome_trace(c.trace);
  CHECK(c.recorded_steps == active);
  CHECK(p.find_prefix("ProfilerStep#").size() == std::size_t(active));
  const auto regions = p.find("matmul_add");
  REQUIRE(regions.size() == std::size_t(active));
  for (auto r : regions) CHECK(p.has_chain(r, {"aten::matmul", "aten::mm"}));
  std::vector<double> gaps;
  for (auto r : regions) {
    const auto matmul = p.under(r, "aten::matmul").at(0);
    gaps.push_back(double(p[matmul].start_ns - p[r].start_ns) / 1e3);
  }
  CHECK(c.first_gap_us == doctest::Approx(gaps.front()).epsilon(0.001));
  // The median of the other steps only: the first step's gap is the one being compared with it.
  CHECK(c.median_other_gap_us ==
        doctest::Approx(workbook::median(std::vector<double>(gaps.begin() + 1, gaps.end()))).epsilon(0.001));
  CHECK(c.first_gap_us > 0);
  CHECK(c.median_other_gap_us > 0);
}

}  // namespace

TEST_CASE("two cycles, two traces, each with its own recorded steps and gaps") {
  const auto dir = fresh_dir("two");
  const auto cycles = run(workbook::Schedule(1, 1, 3, 2), dir);
  REQUIRE(cycles.size() == 2);
  CHECK(cycles[0].trace.filename() == "cycle_0.json");
  CHECK(cycles[1].trace.filename() == "cycle_1.json");
  for (const auto& c : cycles) check_cycle(c, 3);
  // The second cycle's steps are later steps of the run: ProfilerStep#7..9, not #2..4 again.
  const workbook::Profile second = workbook::load_chrome_trace(cycles[1].trace);
  CHECK(second.count("ProfilerStep#7") == 1);
  CHECK(second.count("ProfilerStep#2") == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the schedule decides the cycles: three cycles of two recorded steps") {
  const auto dir = fresh_dir("three");
  const auto cycles = run(workbook::Schedule(0, 1, 2, 3), dir);
  REQUIRE(cycles.size() == 3);
  for (const auto& c : cycles) check_cycle(c, 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("each cycle's trace is written as the cycle ends, not after the loop") {
  // With 256x256 operands, the five steps between the two cycles' ends take well over a
  // millisecond; traces written after the loop would be written back to back.
  const auto dir = fresh_dir("timing");
  torch::manual_seed(1);
  const auto cycles = exercises::profile_cycles(torch::randn({256, 256}), torch::randn({256, 256}), torch::randn({256}),
                                                workbook::Schedule(1, 1, 3, 2), dir);
  REQUIRE(cycles.size() == 2);
  const auto first = std::filesystem::last_write_time(cycles[0].trace),
             second = std::filesystem::last_write_time(cycles[1].trace);
  const auto apart_us = std::chrono::duration_cast<std::chrono::microseconds>(second - first).count();
  CAPTURE(apart_us);
  CHECK(apart_us >= 1000);
  std::filesystem::remove_all(dir);
}
