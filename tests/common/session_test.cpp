// The toolkit on real LibTorch runs.
#include "workbook_doctest.h"

#include <stdexcept>
#include <thread>

#include <torch/csrc/profiler/orchestration/observer.h>
#include <unistd.h>

#include "libtorch_profiler.h"
#include "workbook/lesson/machine.h"
#include "workbook/profiler/chrome_trace.h"
#include "workbook/profiler/key_averages.h"
#include "workbook/profiler/region.h"
#include "workbook/profiler/session.h"

using workbook::Profile;
using workbook::Region;
using workbook::Schedule;
using workbook::Session;

namespace {

const torch::Tensor& small() {
  static const torch::Tensor t = torch::ones({8, 8});
  return t;
}

Profile run_steps(Session& session, int steps) {
  for (int i = 0; i < steps; ++i) {
    {
      Region region("work");
      torch::Tensor y = torch::mm(small(), small());
    }
    session.step();
  }
  return session.finish();
}

}  // namespace

TEST_CASE("a schedule records only its active steps, as ProfilerStep#N regions") {
  Session session(Schedule(1, 1, 3));
  const Profile p = run_steps(session, 5);
  const auto steps = p.find_prefix("ProfilerStep#");
  REQUIRE(steps.size() == 3);
  CHECK(p[steps[0]].name == "ProfilerStep#2");
  CHECK(p[steps[1]].name == "ProfilerStep#3");
  CHECK(p[steps[2]].name == "ProfilerStep#4");
  CHECK(p.count("work") == 3);
  CHECK(p.count("aten::mm") == 3);
  for (auto s : steps) CHECK(!p.parent(s));
  for (const auto& e : p.events()) {
    CHECK(e.start_ns >= 0);
    CHECK(e.end_ns >= e.start_ns);
  }
}

TEST_CASE("warm-up steps are recorded and thrown away: the profiler runs in them, none of their events stay") {
  using torch::profiler::impl::profilerEnabled;
  Session session(Schedule(1, 2, 1));
  const char* labels[] = {"waited", "warmed_1", "warmed_2", "recorded"};
  std::vector<bool> profiler_on;
  for (const char* label : labels) {
    profiler_on.push_back(profilerEnabled());
    {
      Region region(label);
      torch::Tensor y = torch::mm(small(), small());
    }
    session.step();
  }
  const Profile p = session.finish();
  CHECK(profiler_on == std::vector<bool>{false, true, true, true});
  CHECK_FALSE(profilerEnabled());
  CHECK(p.count("waited") == 0);
  CHECK(p.count("warmed_1") == 0);
  CHECK(p.count("warmed_2") == 0);
  CHECK(p.count("recorded") == 1);
  CHECK(p.count("aten::mm") == 1);
  CHECK(p.find_prefix("ProfilerStep#").size() == 1);
}

TEST_CASE("a warm-up runs on into the active steps: the profiler starts once per cycle, not again after it") {
  using workbook::detail::profiler_starts;
  int before = profiler_starts();
  Session one_cycle(Schedule(1, 2, 1));
  CHECK(run_steps(one_cycle, 4).count("aten::mm") == 1);
  CHECK(profiler_starts() - before == 1);
  before = profiler_starts();
  int cycles = 0;
  workbook::SessionOptions options;
  options.on_trace_ready = [&](const Profile& p) {
    ++cycles;
    CHECK(p.count("aten::mm") == 2);  // each cycle's two active steps, never its warm-up
  };
  Session two_cycles(Schedule(0, 1, 2, /*repeat=*/2), options);
  run_steps(two_cycles, 6);
  CHECK(cycles == 2);
  CHECK(profiler_starts() - before == 2);
}

TEST_CASE("a session that ends in its warm-up hands over nothing and leaves the profiler off") {
  int calls = 0;
  workbook::SessionOptions options;
  options.on_trace_ready = [&](const Profile&) { ++calls; };
  Session session(Schedule(0, 3, 1), options);
  const Profile p = run_steps(session, 2);
  CHECK(p.empty());
  CHECK(calls == 0);
  CHECK_FALSE(torch::profiler::impl::profilerEnabled());
  Session next(Schedule(0, 0, 1));  // the next session can record
  CHECK(run_steps(next, 1).count("aten::mm") == 1);
}

TEST_CASE("a session in its warm-up holds the profiler; destroyed there unfinished, it lets it go") {
  {
    Session warming(Schedule(0, 2, 1));
    torch::Tensor y = torch::mm(small(), small());
    warming.step();  // step 1 of 2 warm-up steps: recording, to be thrown away
    CHECK(torch::profiler::impl::profilerEnabled());
    auto second = [] { Session again(Schedule(0, 0, 1)); };
    CHECK_THROWS_WITH_AS(second(), doctest::Contains("already recording"), std::logic_error);
  }
  CHECK_FALSE(torch::profiler::impl::profilerEnabled());
  Session next(Schedule(0, 0, 1));
  CHECK(run_steps(next, 1).count("aten::mm") == 1);
}

TEST_CASE("on_trace_ready gets every cycle; finish returns the last") {
  int calls = 0;
  std::vector<std::size_t> counts;
  workbook::SessionOptions options;
  options.on_trace_ready = [&](const Profile& p) {
    ++calls;
    counts.push_back(p.count("aten::mm"));
  };
  Session session(Schedule(1, 0, 2, 2), options);
  const Profile last = run_steps(session, 6);
  CHECK(calls == 2);
  CHECK(session.cycles_saved() == 2);
  CHECK(counts == std::vector<std::size_t>{2, 2});
  CHECK(last.find_prefix("ProfilerStep#").size() == 2);
  CHECK(last.count("ProfilerStep#4") == 1);
}

TEST_CASE("without a schedule every step is recorded until finish") {
  Session session;
  const Profile p = run_steps(session, 3);
  CHECK(p.count("aten::mm") == 3);
  CHECK(p.count("ProfilerStep#0") == 1);
}

TEST_CASE("shapes, memory and FLOPs are recorded when asked") {
  workbook::SessionOptions options;
  options.record_shapes = options.profile_memory = options.with_flops = true;
  Session session(Schedule(0, 0, 1), options);
  const Profile p = run_steps(session, 1);
  const auto mm = p.find("aten::mm").at(0);
  CHECK(p[mm].input_shapes == std::vector<std::vector<std::int64_t>>{{8, 8}, {8, 8}});
  CHECK(p[mm].flops == 2 * 8 * 8 * 8);
  bool allocated = false;
  for (auto child : p.children(mm))
    allocated = allocated || (p[child].category == workbook::Category::memory && p[child].bytes == 8 * 8 * 4);
  CHECK(allocated);
}

TEST_CASE("regions nest, and record nothing when no session runs") {
  { Region ignored("not recorded"); }
  Session session(Schedule(0, 0, 1));
  {
    Region outer("outer");
    Region inner("inner");
    torch::Tensor y = small() + 1;
  }
  session.step();
  const Profile p = session.finish();
  CHECK(p.count("not recorded") == 0);
  const auto outer = p.find("outer").at(0);
  CHECK(p.has_chain(outer, {"inner", "aten::add"}));
}

TEST_CASE("recording is per thread: a plain std::thread is not seen") {
  Session session(Schedule(0, 0, 1));
  std::thread worker([] { torch::Tensor y = torch::mm(small(), small()); });
  worker.join();
  session.step();
  CHECK(session.finish().count("aten::mm") == 0);
}

TEST_CASE("one session at a time; a session left unfinished stops cleanly") {
  {
    Session first(Schedule(0, 0, 1));
    auto second = [] { Session again(Schedule(0, 0, 1)); };
    CHECK_THROWS_WITH_AS(second(), doctest::Contains("already recording"), std::logic_error);
  }
  Session again(Schedule(0, 0, 1));
  CHECK(run_steps(again, 1).count("aten::mm") == 1);
}

TEST_CASE("with Kineto, LibTorch's own save() and our export agree on the ops") {
  if (!workbook::machine_info().kineto) {
    MESSAGE("skipped: this LibTorch has no Kineto, so ProfilerResult::save() cannot write a trace");
    return;
  }
  const auto dir = std::filesystem::temp_directory_path() / ("wb-kineto-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  workbook::SessionOptions options;
  options.libtorch_trace_path = (dir / "libtorch.json").string();
  Session session(Schedule(1, 1, 2), options);
  const Profile ours = run_steps(session, 4);
  REQUIRE(session.libtorch_trace_saved());
  workbook::write_chrome_trace(ours, dir / "ours.json");
  const Profile theirs = workbook::load_chrome_trace(dir / "libtorch.json");
  const Profile ours_back = workbook::load_chrome_trace(dir / "ours.json");
  std::filesystem::remove_all(dir);
  for (const char* name : {"aten::mm", "work"}) {
    CAPTURE(name);
    CHECK(theirs.count(name) == 2);
    CHECK(ours_back.count(name) == theirs.count(name));
  }
  const workbook::KeyAverages a(theirs), b(ours_back);
  for (const auto& row : a.rows()) {
    if (row.name.rfind("aten::", 0) != 0) continue;
    CAPTURE(row.name);
    REQUIRE(b.find(row.name) != nullptr);
    CHECK(b.find(row.name)->count == row.count);
  }
}
