// Checks of exercise 01, built twice: against the learner's file (./workbook check 1) and
// against the reference solution (the suite).
#include "workbook_doctest.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>
#include <utility>

#include "01_matmul_add.h"
#include "op_inputs_observer.h"
#include "region_observer.h"
#include "workbook/lesson/timing.h"
#include "workbook/profiler/chrome_trace.h"

namespace {

// A folder of the check's own, emptied first and removed when the check ends, passed or failed (a
// failed REQUIRE leaves the check early: no trace files are left behind in /tmp).
struct FreshDir : std::filesystem::path {
  explicit FreshDir(const char* tag)
      : path(std::filesystem::temp_directory_path() / fmt::format("wb-check01-{}-{}", tag, ::getpid())) {
    std::filesystem::remove_all(*this);
    std::filesystem::create_directories(*this);
  }
  FreshDir(const FreshDir&) = delete;
  FreshDir& operator=(const FreshDir&) = delete;
  ~FreshDir() {
    std::error_code ignored;
    std::filesystem::remove_all(*this, ignored);
  }
};

// Runs the exercise on fixed inputs under the test's own observer, which slows chosen matmul_add
// calls (numbered from 0 over every step, recorded or not) by some microseconds inside the gap
// before their aten::matmul, and notes which `watched` files exist as each step starts; `look` reads
// the observer before it goes. Every call is held to what the contract says of all of them: one
// computation per step of the schedule (skip_first, wait and warm-up steps too) and none besides.
// Every test checks it, so also the first call of the process: a warm-up kept for that call alone
// cannot hide behind the test order.
std::vector<exercises::CycleGaps> run(const workbook::Schedule& schedule, const std::filesystem::path& dir,
                                      std::map<int, int> delay_us = {}, std::vector<std::filesystem::path> watched = {},
                                      const std::function<void(const testing::RegionObserver&)>& look = nullptr) {
  torch::manual_seed(1);
  // Not square: x [24, 32] · w [32, 16] + b [16]. A matmul of x with itself, or the bias added to x
  // before the matmul, cannot run on these shapes.
  const torch::Tensor x = torch::randn({24, 32}), w = torch::randn({32, 16}), b = torch::randn({16});
  const testing::RegionObserver observer("matmul_add", "aten::matmul", std::move(watched), std::move(delay_us));
  auto cycles = exercises::profile_cycles(x, w, b, schedule, dir);
  INFO("one matmul_add region and one aten::matmul per step of the schedule (", schedule.total_steps(),
       " steps, skip_first ", schedule.skip_first, " included), and no computation besides");
  CHECK(observer.steps() == schedule.total_steps());
  CHECK(observer.op_starts() == schedule.total_steps());
  if (look) look(observer);
  return cycles;
}

// The gap from each matmul_add region's start to its aten::matmul's, in µs, in step order.
std::vector<double> gaps_in(const workbook::Profile& p) {
  std::vector<double> gaps;
  for (auto r : p.find("matmul_add")) {
    const auto matmul = p.under(r, "aten::matmul").at(0);
    gaps.push_back(double(p[matmul].start_ns - p[r].start_ns) / 1e3);
  }
  return gaps;
}

// Matches a trace's gaps against what was returned, and its structure against the schedule.
void check_cycle(const exercises::CycleGaps& c, int active) {
  REQUIRE(std::filesystem::exists(c.trace));
  const workbook::Profile p = workbook::load_chrome_trace(c.trace);
  CHECK(c.recorded_steps == active);
  CHECK(p.find_prefix("ProfilerStep#").size() == std::size_t(active));
  const auto regions = p.find("matmul_add");
  REQUIRE(regions.size() == std::size_t(active));
  for (auto r : regions) {
    CHECK(p.has_chain(r, {"aten::matmul", "aten::mm"}));
    CHECK(p.count_under(r, "aten::add") == 1);  // y = add(matmul(x, w), b): the bias too
    // Nothing else in the region: the gap before aten::matmul is the cold start's, no other op's.
    std::vector<std::string> ops;
    for (auto child : p.children(r))
      if (p[child].category == workbook::Category::cpu_op) ops.emplace_back(p[child].name);
    CHECK(ops == std::vector<std::string>{"aten::matmul", "aten::add"});
    // Each region lies inside its step: ProfilerStep#N -> matmul_add, as lesson 01 showed.
    const auto parent = p.parent(r);
    CHECK((parent && p[*parent].name.rfind("ProfilerStep#", 0) == 0));
  }
  const std::vector<double> gaps = gaps_in(p);
  CHECK(c.first_gap_us == doctest::Approx(gaps.front()).epsilon(0.001));
  // The median of the other steps only: the first step's gap is the one being compared with it.
  CHECK(c.median_other_gap_us ==
        doctest::Approx(workbook::median(std::vector<double>(gaps.begin() + 1, gaps.end()))).epsilon(0.001));
  CHECK(c.first_gap_us > 0);
  CHECK(c.median_other_gap_us > 0);
}

}  // namespace

TEST_CASE("two cycles, two traces, each with its own recorded steps and gaps") {
  const FreshDir dir("two");
  const auto cycles = run(workbook::Schedule(1, 1, 3, 2), dir);
  REQUIRE(cycles.size() == 2);
  CHECK(cycles[0].trace.filename() == "cycle_0.json");
  CHECK(cycles[1].trace.filename() == "cycle_1.json");
  for (const auto& c : cycles) check_cycle(c, 3);
  // The second cycle's steps are later steps of the run: ProfilerStep#7..9, not #2..4 again.
  const workbook::Profile second = workbook::load_chrome_trace(cycles[1].trace);
  CHECK(second.count("ProfilerStep#7") == 1);
  CHECK(second.count("ProfilerStep#2") == 0);
}

TEST_CASE("a second call into the same folder numbers its cycles from 0 again, replacing the first call's traces") {
  const FreshDir dir("again");
  const auto first = run(workbook::Schedule(1, 1, 2, 2), dir);
  REQUIRE(first.size() == 2);
  const auto second = run(workbook::Schedule(1, 1, 3, 2), dir);
  REQUIRE(second.size() == 2);
  CHECK(second[0].trace.filename() == "cycle_0.json");
  CHECK(second[1].trace.filename() == "cycle_1.json");
  for (const auto& c : second) check_cycle(c, 3);  // the second call's traces, not the first's
  CHECK(!std::filesystem::exists(dir / "cycle_2.json"));
}

TEST_CASE("a cycle of one recorded step has no other steps: their median is 0, not the cold gap again") {
  const FreshDir dir("one");
  const auto cycles = run(workbook::Schedule(1, 1, 1, 2), dir);
  REQUIRE(cycles.size() == 2);
  for (const auto& c : cycles) {
    CHECK(c.recorded_steps == 1);
    CHECK(c.first_gap_us > 0);
    CHECK(c.median_other_gap_us == 0);
  }
}

TEST_CASE("the schedule decides the cycles: three cycles of two recorded steps") {
  const FreshDir dir("three");
  const auto cycles = run(workbook::Schedule(0, 1, 2, 3), dir);
  REQUIRE(cycles.size() == 3);
  for (const auto& c : cycles) check_cycle(c, 2);
  // skip_first steps come before the first cycle: the loop runs them too, and every cycle ends.
  const FreshDir skipped_dir("skip");
  const auto skipped = run(workbook::Schedule(0, 1, 2, 2, 3), skipped_dir);
  REQUIRE(skipped.size() == 2);
  for (const auto& c : skipped) check_cycle(c, 2);
  // Cycles are numbered from 0 as they end, whatever came before the first.
  CHECK(skipped[0].trace.filename() == "cycle_0.json");
  CHECK(skipped[1].trace.filename() == "cycle_1.json");
}

TEST_CASE("each cycle's trace is on disk before the next cycle's first step starts") {
  // Schedule(1, 1, 4, 2): steps 0..5 are cycle 0 (wait, warm-up, 4 recorded), 6..11 cycle 1.
  // The test watches the run from inside (its own RecordFunction observer): when step 6 starts,
  // cycle 0's trace must exist; written after the loop, it does not.
  const FreshDir dir("written");
  const std::vector<std::filesystem::path> traces{dir / "cycle_0.json", dir / "cycle_1.json"};
  int steps = 0;
  bool first_before_second = false, second_before_end = false;
  const auto cycles =
      run(workbook::Schedule(1, 1, 4, 2), dir, {}, traces, [&](const testing::RegionObserver& observer) {
        steps = observer.steps();
        if (steps == 12) {
          first_before_second = observer.existed_at(6, 0);
          second_before_end = observer.existed_at(11, 1);
        }
      });
  REQUIRE(steps == 12);
  INFO("the trace of cycle 0 must be written by on_trace_ready, as cycle 0 ends (before step 6)");
  CHECK(first_before_second);
  CHECK_FALSE(second_before_end);  // and not before its own cycle ended
  REQUIRE(cycles.size() == 2);
}

TEST_CASE("a cycle's trace is written inside the step() that ends the cycle, before the next step opens") {
  // Schedule(0, 0, 2, 2): cycle 0 records steps 0 and 1, cycle 1 steps 2 and 3, with no idle step
  // between them. session.step() after step 1 saves cycle 0 (on_trace_ready runs there) and then opens
  // ProfilerStep#2: the trace must exist by then. Kept and written at the top of the next loop
  // iteration, it comes one step late.
  const FreshDir dir("in_step");
  torch::manual_seed(1);
  const torch::Tensor x = torch::randn({24, 32}), w = torch::randn({32, 16}), b = torch::randn({16});
  const testing::RegionObserver observer("ProfilerStep#2", "aten::matmul", {dir / "cycle_0.json"});
  const auto cycles = exercises::profile_cycles(x, w, b, workbook::Schedule(0, 0, 2, 2), dir);
  REQUIRE(cycles.size() == 2);
  REQUIRE(observer.steps() == 1);
  CHECK(observer.existed_at(0, 0));
}

TEST_CASE("an even count of other steps: their median is the mean of the two middle gaps") {
  // Each cycle records 3 steps, the first and two others; the observer slows the last by 2 ms
  // inside the gap, so the two others' gaps differ by ~2 ms and their median lies halfway (the
  // larger of the two is not the median).
  const FreshDir dir("even");
  const auto cycles = run(workbook::Schedule(1, 1, 3, 2), dir, {{4, 2000}, {9, 2000}});
  REQUIRE(cycles.size() == 2);
  for (const auto& c : cycles) {
    check_cycle(c, 3);
    // Decided against this run's own two gaps (a loaded machine stretches the sleep): the median
    // lies well between them, not at the larger (the upper middle) nor at the smaller.
    const std::vector<double> gaps = gaps_in(workbook::load_chrome_trace(c.trace));
    REQUIRE(gaps.size() == 3);
    const double fast = std::min(gaps[1], gaps[2]), slow = std::max(gaps[1], gaps[2]);
    CAPTURE(c.median_other_gap_us);
    CAPTURE(fast);
    CAPTURE(slow);
    REQUIRE(slow - fast > 500);  // the observer's 2 ms are in one of them
    CHECK(c.median_other_gap_us > fast + 0.25 * (slow - fast));
    CHECK(c.median_other_gap_us < slow - 0.25 * (slow - fast));
  }
}

TEST_CASE("the first gap is the first recorded step's, also when it is the smallest") {
  // The observer slows both later recorded steps by 5 ms inside the gap (calls 3 and 4: wait, warm-up,
  // then three recorded), so the first recorded step's gap, cold or not, is the smallest of the
  // cycle: it is still the one reported first (trial 19 swapped it with the smallest other).
  const FreshDir dir("first_smallest");
  const auto cycles = run(workbook::Schedule(1, 1, 3, 1), dir, {{3, 5000}, {4, 5000}});
  REQUIRE(cycles.size() == 1);
  // The test's premise, read from the trace itself: the first gap is the smallest.
  const std::vector<double> gaps = gaps_in(workbook::load_chrome_trace(cycles[0].trace));
  REQUIRE(gaps.size() == 3);
  REQUIRE(gaps[0] < std::min(gaps[1], gaps[2]));
  check_cycle(cycles[0], 3);
}

TEST_CASE("the other steps' gap is their median: one slow step moves a mean, not the median") {
  // Each cycle records 4 steps. The observer slows the first recorded step by 1 ms and the last
  // by 2 ms, inside the gap: the median of the 3 other steps stays a normal gap, their mean is
  // ~700 us larger, and a median that includes the first step is ~500 us larger.
  const FreshDir dir("median");
  const auto cycles = run(workbook::Schedule(1, 1, 4, 2), dir, {{2, 1000}, {5, 2000}, {8, 1000}, {11, 2000}});
  REQUIRE(cycles.size() == 2);
  for (const auto& c : cycles) {
    check_cycle(c, 4);
    CAPTURE(c.first_gap_us);
    CAPTURE(c.median_other_gap_us);
    CHECK(c.first_gap_us >= 1000);  // the test's premise: the delay lands inside the gap
  }
}

TEST_CASE("each step computes add(matmul(x, w), b) in the inputs' dtypes: the whole bias, added once, with alpha 1") {
  // What the profile cannot show: the values the add was given. A scalar taken from b, or b scaled
  // by alpha, runs the same ops; inputs cast to float32 first run them on rounded copies. A float64
  // bias beside float32 x and w is added as it is (add promotes), not rounded to the product's dtype.
  const std::vector<std::pair<torch::ScalarType, torch::ScalarType>> dtypes{
      {torch::kFloat, torch::kFloat}, {torch::kDouble, torch::kDouble}, {torch::kFloat, torch::kDouble}};
  for (const auto& [product_dtype, bias_dtype] : dtypes) {
    CAPTURE(std::string(c10::toString(product_dtype)));
    CAPTURE(std::string(c10::toString(bias_dtype)));
    torch::manual_seed(2);
    const auto options = torch::TensorOptions().dtype(product_dtype);
    const torch::Tensor x = torch::randn({24, 32}, options), w = torch::randn({32, 16}, options),
                        b = torch::randn({16}, torch::TensorOptions().dtype(bias_dtype));
    const FreshDir dir("inputs");
    testing::OpInputsObserver adds("aten::add");
    (void)exercises::profile_cycles(x, w, b, workbook::Schedule(0, 0, 1, 2), dir);
    const auto calls = adds.calls();
    REQUIRE(calls.size() >= 2);
    for (const auto& call : calls) {
      CHECK(std::string(c10::toString(call.self.scalar_type())) == std::string(c10::toString(product_dtype)));
      CHECK(std::string(c10::toString(call.other.scalar_type())) == std::string(c10::toString(bias_dtype)));
      CHECK(testing::all_close(call.self, torch::matmul(x, w)));
      CHECK(testing::all_close(call.other, b));
      CHECK(call.alpha == 1.0);
    }
  }
}

TEST_CASE("transposed inputs are multiplied as they are: the region holds aten::matmul and aten::add, no copy first") {
  // x and w as transposed views: matmul reads them by their strides (the BLAS takes a transposed
  // operand). A contiguous() before it would add a copy to every step, and the gap would time it.
  torch::manual_seed(3);
  const torch::Tensor x = torch::randn({32, 24}).t(), w = torch::randn({16, 32}).t(), b = torch::randn({16});
  REQUIRE_FALSE(x.is_contiguous());
  const FreshDir dir("transposed");
  const auto cycles = exercises::profile_cycles(x, w, b, workbook::Schedule(1, 1, 3, 2), dir);
  REQUIRE(cycles.size() == 2);
  for (const auto& c : cycles) check_cycle(c, 3);
}
