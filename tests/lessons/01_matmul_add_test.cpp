// Checks of exercise 01, built twice: against the learner's file (./workbook check 1) and
// against the reference solution (the suite).
#include "workbook_doctest.h"

#include <fmt/format.h>
#include <unistd.h>

#include "01_matmul_add.h"
#include "workbook/chrome_trace.h"

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
  const auto first_matmul = p.under(regions.front(), "aten::matmul").at(0);
  CHECK(c.first_gap_us == doctest::Approx(double(p[first_matmul].start_ns - p[regions.front()].start_ns) / 1e3).epsilon(0.001));
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
