#include <doctest/doctest.h>

#include "synthetic_events.h"
#include "workbook/profiler/profile.h"

#include <algorithm>

using workbook::Category;
using workbook::Event;
using workbook::Profile;

namespace {

using testing::make_event;

// step [0,100] > region [5,95] > matmul [10,60] > mm [20,60]; add [60,90]; given out of order.
Profile sample() {
  return Profile({make_event("aten::add", 60, 90), make_event("aten::mm", 20, 60),
                  make_event("ProfilerStep#2", 0, 100, Category::user_annotation), make_event("aten::matmul", 10, 60),
                  make_event("matmul_add", 5, 95, Category::user_annotation)});
}

}  // namespace

TEST_CASE("events are sorted by start and nested by interval") {
  const Profile p = sample();
  REQUIRE(p.size() == 5);
  CHECK(p[0].name == "ProfilerStep#2");
  CHECK(p.roots().size() == 1);
  const auto region = p.find("matmul_add").at(0);
  CHECK(p[*p.parent(region)].name == "ProfilerStep#2");
  CHECK(p.has_chain(region, {"aten::matmul", "aten::mm"}));
  CHECK_FALSE(p.has_chain(region, {"aten::add", "aten::mm"}));
  CHECK(p.count_under(region, "aten::add") == 1);
  // An event that starts exactly where another ends is its sibling, not its child.
  const auto add = p.find("aten::add").at(0);
  CHECK(p.parent(add) == region);
  CHECK(p.depth(p.find("aten::mm").at(0)) == 3);
}

TEST_CASE("self time is total minus the direct children's totals") {
  const Profile p = sample();
  const auto matmul = p.find("aten::matmul").at(0);
  CHECK(p.total_ns(matmul) == 50);
  CHECK(p.self_ns(matmul) == 10);
  const auto region = p.find("matmul_add").at(0);
  CHECK(p.self_ns(region) == 90 - 50 - 30);
  CHECK(p.span_ns() == 100);
}

TEST_CASE("threads nest separately") {
  const Profile p(
      {make_event("outer", 0, 100, Category::cpu_op, 1), make_event("other_thread", 10, 20, Category::cpu_op, 2)});
  CHECK(p.roots().size() == 2);
}

TEST_CASE("memory instants join the innermost op and do not reduce self time") {
  Event alloc = make_event("[memory]", 30, 30, Category::memory);
  alloc.bytes = 4096;
  const Profile p({make_event("aten::mm", 20, 60), alloc});
  const auto mm = p.find("aten::mm").at(0);
  REQUIRE(p.children(mm).size() == 1);
  CHECK(p[p.children(mm)[0]].bytes == 4096);
  CHECK(p.self_ns(mm) == 40);
}

TEST_CASE("a kernel hangs under the launch with its correlation id") {
  const Event launch = testing::make_launch(25, 30, 7);
  const Event kernel = testing::make_device_work("gemm_kernel", 40, 140, 7, workbook::DeviceWork::kernel, 7);
  const Profile p({make_event("aten::mm", 20, 60), launch, kernel});
  const auto k = p.find("gemm_kernel").at(0);
  CHECK(p[*p.parent(k)].name == "cudaLaunchKernel");
  // Device time does not count against host self time.
  CHECK(p.self_ns(p.find("cudaLaunchKernel").at(0)) == 5);
}

TEST_CASE("find_prefix, of_category and format_tree") {
  const Profile p = sample();
  CHECK(p.find_prefix("ProfilerStep#").size() == 1);
  CHECK(p.of_category(Category::user_annotation).size() == 2);
  const std::string tree = workbook::format_tree(p, 0);
  CHECK(tree.find("ProfilerStep#2  total 0.1us") == 0);
  CHECK(tree.find("\n      aten::mm") != std::string::npos);
  CHECK(workbook::category_name(Category::runtime) == "cuda_runtime");
}

TEST_CASE("self_ns_of sums self times by name; interval_union_ns counts overlap once") {
  const Profile p = sample();
  CHECK(workbook::self_ns_of(p, {"aten::mm", "aten::add"}) == 40 + 30);
  CHECK(workbook::self_ns_of(p, {"nothing"}) == 0);
  const Profile k(
      {make_event("k1", 0, 10), make_event("k2", 5, 20), make_event("k3", 30, 40), make_event("k4", 40, 45)});
  CHECK(workbook::interval_union_ns(k, {0, 1, 2, 3}) == 20 + 15);
  CHECK(workbook::interval_union_ns(k, {}) == 0);
}

TEST_CASE("Python's _remove_dup_nodes: an only child with its parent's name folds into the parent") {
  // to [0,100] > to [10,90] > _to_copy [20,80] > copy_ [30,70]; add [200,300] > add [210,290]
  // plus a kernel launched inside the inner to; the other names must survive the compaction.
  const Event launch = testing::make_launch(40, 45, 3);
  const Event kernel = testing::make_device_work("gemm", 50, 60, 7, workbook::DeviceWork::kernel, 3);
  const Profile p({make_event("aten::to", 0, 100), make_event("aten::to", 10, 90), make_event("aten::_to_copy", 20, 80),
                   make_event("aten::copy_", 30, 70), launch, kernel, make_event("aten::add", 200, 300),
                   make_event("aten::add", 210, 290)});
  CHECK(p.merged_duplicates() == 2);
  CHECK(p.count("aten::to") == 1);
  CHECK(p.count("aten::add") == 1);
  for (const Event& e : p.events()) CHECK(!e.name.empty());
  const auto to = p.find("aten::to").at(0);
  CHECK(p.total_ns(to) == 100);
  CHECK(p.has_chain(to, {"aten::_to_copy", "aten::copy_", "cudaLaunchKernel", "gemm"}));
  CHECK(p.self_ns(to) == 100 - 60);
  CHECK(p.self_ns(p.find("aten::add").at(0)) == 100);
  CHECK(p.kernels(p.find("aten::copy_").at(0)).size() == 1);
}

TEST_CASE("a chain of same-named events folds into its top, which keeps the innermost's kernels only") {
  // x [0,100] > x [10,90] > x [15,85] > mm [20,80] > 64 bytes at 30; each x owns a kernel by its
  // External id. Python's _remove_dup_nodes assigns parent.kernels = child.kernels at each fold, so
  // the top's own kernel and the middle's are dropped and the innermost's stays.
  std::vector<Event> events{make_event("aten::x", 0, 100), make_event("aten::x", 10, 90), make_event("aten::x", 15, 85),
                            make_event("aten::mm", 20, 80), testing::make_allocation(30, 64)};
  for (int k = 0; k < 3; ++k) {
    events[std::size_t(k)].external_id = 11 + k;
    Event kernel = testing::make_device_work("kernel", 200 + 20 * k, 210 + 20 * k + k, 7);
    kernel.external_id = 11 + k;
    events.push_back(kernel);
  }
  const Profile p(events);
  CHECK(p.merged_duplicates() == 2);
  REQUIRE(p.count("aten::x") == 1);
  const auto x = p.find("aten::x").at(0), mm = p.find("aten::mm").at(0);
  CHECK(p.parent(mm) == x);
  REQUIRE(p.children(x).size() == 1);
  CHECK(p.children(x)[0] == mm);
  REQUIRE(p.children(mm).size() == 1);
  CHECK(p[p.children(mm).front()].bytes == 64);
  REQUIRE(p.kernels(x).size() == 1);
  CHECK(p[p.kernels(x).back()].start_ns == 240);
  const auto stats = p.stats();
  CHECK(stats[x].self_device_ns == 12);
  CHECK(stats[x].device_total_ns == 12);
  CHECK(stats[x].cpu_memory == 64);
  CHECK(stats[x].self_cpu_memory == 0);
  CHECK(stats[mm].self_cpu_memory == 64);
  // The three kernels are still events of the profile; two of them belong to no op now.
  CHECK(p.count("kernel") == 3);
}

TEST_CASE("a partial overlap is not nesting, and self time is not clamped") {
  // b starts inside a but ends after it: both are roots (Python's rule).
  const Profile p({make_event("a", 0, 50), make_event("b", 40, 80)});
  CHECK(p.roots().size() == 2);
  // x2 overlaps x1 partially, so both are children of x; together they outlast x: Python
  // reports the negative self time as it is (the workbook used to clamp it to 0).
  const Profile r({make_event("x", 0, 10), make_event("x1", 0, 6), make_event("x2", 4, 10)});
  CHECK(r.children(r.find("x").at(0)).size() == 2);
  CHECK(r.self_ns(r.find("x").at(0)) == 10 - 6 - 6);
}

TEST_CASE("memory belongs to every host event that holds its time stamp, on any thread") {
  Event alloc;
  alloc.name = "[memory]";
  alloc.category = Category::memory;
  alloc.start_ns = alloc.end_ns = 30;
  alloc.bytes = 256;
  alloc.thread = 9;  // another thread than the op
  Event device_alloc = alloc;
  device_alloc.device_type = workbook::DeviceType::cuda;
  device_alloc.bytes = 1024;
  Event stray = alloc;
  stray.start_ns = stray.end_ns = 500;
  const Profile p({make_event("outer", 0, 100), make_event("inner", 20, 40), alloc, device_alloc, stray});
  const auto stats = p.stats();
  const auto outer = p.find("outer").at(0), inner = p.find("inner").at(0);
  CHECK(stats[outer].cpu_memory == 256);
  CHECK(stats[outer].self_cpu_memory == 0);
  CHECK(stats[inner].self_cpu_memory == 256);
  CHECK(stats[inner].device_memory == 1024);
  const auto alone = p.unattributed_memory();
  CHECK(std::count(alone.begin(), alone.end(), true) == 1);
}

TEST_CASE("a 100000-deep tree is built, summed and printed without recursion") {
  std::vector<Event> events;
  const std::int64_t depth = 100000;
  for (std::int64_t i = 0; i < depth; ++i) events.push_back(make_event(i % 2 ? "odd" : "even", i, 2 * depth - i));
  const Profile p(std::move(events));
  CHECK(p.depth(p.size() - 1) == depth - 1);
  const auto stats = p.stats();
  CHECK(stats[0].self_cpu_ns == 2);
  CHECK(p.descendants(0).size() == std::size_t(depth - 1));
}

TEST_CASE("subtrees keeps each event under a match once, nested matches included") {
  // a [0,100] > b [10,90] > a [20,80] > b [30,70]; c [200,210] is under no match.
  const Profile p({make_event("a", 0, 100), make_event("b", 10, 90), make_event("a", 20, 80), make_event("b", 30, 70),
                   make_event("c", 200, 210)});
  const Profile under_a = workbook::subtrees(p, "a");
  CHECK(under_a.size() == 4);
  CHECK(under_a.count("a") == 2);
  CHECK(under_a.count("c") == 0);
  CHECK(workbook::subtrees(p, "b").size() == 3);
  CHECK(workbook::subtrees(p, "none").empty());
}

TEST_CASE("an op that ends before it starts holds no memory record, as Python's in_interval gives an empty slice") {
  // Only a hand-built Event can be like this (the importer refuses a negative duration).
  const Profile p(
      {make_event("aten::outer", 0, 100), make_event("aten::backwards", 50, 10), testing::make_allocation(30, 1000)});
  const auto outer = p.find("aten::outer").at(0), backwards = p.find("aten::backwards").at(0);
  const auto stats = p.stats();
  CHECK(stats[backwards].cpu_memory == 0);
  CHECK(stats[outer].cpu_memory == 1000);
  CHECK(stats[outer].self_cpu_memory == 1000);
  CHECK_FALSE(p.unattributed_memory()[p.find("[memory]").at(0)]);
}
