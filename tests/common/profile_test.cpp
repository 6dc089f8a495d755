#include <doctest/doctest.h>

#include "synthetic_events.h"
#include "workbook/profile.h"

using workbook::Category;
using workbook::Event;
using workbook::Profile;

namespace {

using testing::make_event;

// step [0,100] > region [5,95] > matmul [10,60] > mm [20,60]; add [60,90]; given out of order.
Profile sample() {
  return Profile({make_event("aten::add", 60, 90), make_event("aten::mm", 20, 60), make_event("ProfilerStep#2", 0, 100, Category::user_annotation),
                  make_event("aten::matmul", 10, 60), make_event("matmul_add", 5, 95, Category::user_annotation)});
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
  const Profile p({make_event("outer", 0, 100, Category::cpu_op, 1), make_event("other_thread", 10, 20, Category::cpu_op, 2)});
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
  Event launch = make_event("cudaLaunchKernel", 25, 30, Category::runtime);
  launch.correlation = 7;
  Event kernel = make_event("gemm_kernel", 40, 140, Category::kernel, 7);
  kernel.device_type = workbook::DeviceType::cuda;
  kernel.correlation = 7;
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
  const Profile k({make_event("k1", 0, 10), make_event("k2", 5, 20), make_event("k3", 30, 40), make_event("k4", 40, 45)});
  CHECK(workbook::interval_union_ns(k, {0, 1, 2, 3}) == 20 + 15);
  CHECK(workbook::interval_union_ns(k, {}) == 0);
}
