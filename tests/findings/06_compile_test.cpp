// Lesson 06's findings on hand-made profiles: each shown where the run bears it out, NOT shown
// where it does not, and a missing region is an error, never a count of zero.
#include <doctest/doctest.h>

#include <functional>

#include "synthetic_events.h"
#include "workbook/findings/06_compile.h"

using testing::make_event;
using workbook::Category;
using workbook::Event;
using workbook::Profile;
namespace f06 = workbook::findings06;

namespace {

// Two calls named `region` at 0 and 1000 ns, each holding `ops` (as [op, op, ...] in sequence);
// `second_extra` adds ops to the second call only.
Profile two_calls(const char* region, std::vector<const char*> ops, std::vector<const char*> second_extra = {}) {
  std::vector<Event> e;
  for (int call = 0; call < 2; ++call) {
    const std::int64_t at = call * 1000;
    e.push_back(make_event(region, at, at + 900, Category::user_annotation));
    std::int64_t t = at + 10;
    auto add = [&](const char* op) {
      e.push_back(make_event(op, t, t + 50));
      t += 60;
    };
    for (const char* op : ops) add(op);
    if (call == 1)
      for (const char* op : second_extra) add(op);
  }
  return Profile(std::move(e));
}

}  // namespace

TEST_CASE("one call's ops are those beneath the first region, cpu ops only") {
  const auto ops =
      f06::ops_of_first_call(two_calls("eager_linear", {"aten::t", "aten::addmm"}, {"aten::t"}), "eager_linear");
  CHECK(ops == std::map<std::string, std::size_t>{{"aten::addmm", 1}, {"aten::t", 1}});
}

TEST_CASE("transpose elimination: shown, and NOT shown when any call keeps its aten::t or eager has none") {
  const Profile eager = two_calls("eager_linear", {"aten::t", "aten::addmm"});
  const Profile compiled = two_calls("compiled_linear", {"aten::addmm"});
  CHECK(f06::transpose_eliminated(eager, compiled).holds);
  // One compiled call still transposes: not every call is free of aten::t.
  const auto one_left = f06::transpose_eliminated(eager, two_calls("compiled_linear", {"aten::addmm"}, {"aten::t"}));
  CHECK_FALSE(one_left.holds);
  CHECK(one_left.evidence ==
        "calls with one aten::t: eager 2 of 2; compiled calls with no aten::t 1 and one aten::addmm 2, of 2");
  CHECK_FALSE(f06::transpose_eliminated(two_calls("eager_linear", {"aten::addmm"}), compiled).holds);
  // A compiled call that runs no GEMM at all did not "run the same aten::addmm".
  CHECK_FALSE(f06::transpose_eliminated(eager, two_calls("compiled_linear", {"aten::mm"})).holds);
}

TEST_CASE("the compiled MLP is fused: NOT shown with a separate gelu or mul in any call, or a GEMM short") {
  const std::vector<const char*> fused{"aten::mm", "aten::mm", "workbook::fused_gelu_mul", "aten::mm"};
  CHECK(f06::mlp_fused(two_calls("compiled_mlp", fused)).holds);
  CHECK_FALSE(f06::mlp_fused(two_calls("compiled_mlp", fused, {"aten::mul"})).holds);
  CHECK_FALSE(f06::mlp_fused(two_calls("compiled_mlp", {"aten::mm", "aten::mm", "aten::gelu", "aten::mul"})).holds);
  CHECK_FALSE(f06::mlp_fused(two_calls("compiled_mlp", {"aten::mm", "workbook::fused_gelu_mul", "aten::mm"})).holds);
}

TEST_CASE("the host-time sentence says faster only when the compiled call was faster in every round") {
  CHECK(f06::host_time_saved({2.5, 2.6, 2.4}, {2.0, 2.0, 2.2}) ==
        "the compiled path, which skips aten::t, was faster in all 3 rounds here, by 0.50 us per call (the median "
        "of the per-round differences, which need not equal the difference of the two medians)");
  // Faster by the median, but not in every round: noise, said as such.
  const std::string mixed = f06::host_time_saved({2.5, 2.6, 2.0}, {2.0, 2.0, 2.4});
  CHECK(mixed.find("does NOT show a saving from skipping aten::t: the compiled path was faster in 2 of 3 rounds, not "
                   "in all") != std::string::npos);
  CHECK(mixed.find("0.50 us per call faster") != std::string::npos);
  const std::string slower = f06::host_time_saved({2.0, 2.0}, {2.5, 2.5});
  CHECK(slower.find("faster in 0 of 2 rounds") != std::string::npos);
  CHECK(slower.find("0.50 us per call slower") != std::string::npos);
  CHECK_THROWS_AS(f06::host_time_saved({1.0}, {}), std::invalid_argument);
}

TEST_CASE("AOTInductor runs no aten::t: NOT shown when its Linear or its MLP has one") {
  const Profile linear = two_calls("aoti", {"aten::addmm"});
  const Profile mlp = two_calls("aoti_mlp", {"cpp_fused_gelu_mul_0"});
  CHECK(f06::aoti_runs_no_transpose(linear, mlp).holds);
  CHECK_FALSE(f06::aoti_runs_no_transpose(two_calls("aoti", {"aten::addmm"}, {"aten::t"}), mlp).holds);
  CHECK_FALSE(f06::aoti_runs_no_transpose(linear, two_calls("aoti_mlp", {"aten::t"})).holds);
}

TEST_CASE("AOTInductor equals eager: within 1e-4, the MLP's relative to its outputs above 1") {
  CHECK(f06::aoti_equals_eager(1e-6, 1e-3, 20.0).holds);
  CHECK_FALSE(f06::aoti_equals_eager(1e-3, 0, 1.0).holds);
  CHECK_FALSE(f06::aoti_equals_eager(0, 1e-3, 0.5).holds);  // small outputs: no scaling up of the tolerance
}

TEST_CASE("AOTInductor fused gelu and mul: NOT shown with two generated kernels in a call or an aten::mul") {
  CHECK(f06::aoti_fused_gelu_mul(two_calls("aoti_mlp", {"cpp_fused_gelu_mul_0"})).holds);
  CHECK_FALSE(f06::aoti_fused_gelu_mul(two_calls("aoti_mlp", {"cpp_fused_gelu_0"}, {"cpp_fused_mul_1"})).holds);
  CHECK_FALSE(f06::aoti_fused_gelu_mul(two_calls("aoti_mlp", {"cpp_fused_gelu_0", "aten::mul"})).holds);
  CHECK_FALSE(f06::aoti_fused_gelu_mul(two_calls("aoti_mlp", {"aten::gelu", "aten::mul"})).holds);
}

TEST_CASE("AOTInductor's GEMMs run below the dispatcher: NOT shown with an aten::mm or fewer shim calls") {
  const std::string code = "aoti_torch_cpu_mm_out(a); aoti_torch_cpu_mm_out(b); x; aoti_torch_cpu_mm_out(c);";
  const Profile quiet = two_calls("aoti_mlp", {"cpp_fused_gelu_mul_0"});
  CHECK(f06::aoti_gemms_below_the_dispatcher(code, quiet).holds);
  CHECK_FALSE(f06::aoti_gemms_below_the_dispatcher(code, two_calls("aoti_mlp", {"aten::mm"})).holds);
  CHECK_FALSE(
      f06::aoti_gemms_below_the_dispatcher("aoti_torch_cpu_mm_out(a); at::mm(b, c); aoti_torch_cpu_mm_out(d);", quiet)
          .holds);
}

TEST_CASE("our cache's walk: each finding NOT shown when its entry count differs") {
  f06::CacheWalk walk;
  walk.all_equal_eager = true;
  walk.after_repeat = 1;
  walk.after_batch = 2;
  walk.after_second_batch = 2;
  walk.after_transposed = 3;
  walk.after_update = 3;
  walk.after_replace = 4;
  CHECK(f06::cache_equals_eager(walk).holds);
  CHECK(f06::batch_becomes_dynamic(walk).holds);
  CHECK(f06::layout_is_guarded(walk).holds);
  CHECK(f06::in_place_update_keeps_entry(walk).holds);
  const auto changed = [&walk](const std::function<void(f06::CacheWalk&)>& change) {
    f06::CacheWalk w = walk;
    change(w);
    return w;
  };
  const std::vector<std::pair<const char*, f06::CacheWalk>> wrong_walks{
      {"a wrong answer", changed([](f06::CacheWalk& w) { w.all_equal_eager = false; })},
      {"the second batch recompiles", changed([](f06::CacheWalk& w) { w.after_second_batch = 3; })},
      {"the first batch does not", changed([](f06::CacheWalk& w) { w.after_batch = w.after_second_batch = 1; })},
      {"layout not guarded", changed([](f06::CacheWalk& w) { w.after_transposed = 2; })},
      {"the update recompiles", changed([](f06::CacheWalk& w) { w.after_update = 4, w.after_replace = 5; })},
      {"the replacement does not", changed([](f06::CacheWalk& w) { w.after_replace = 3; })}};
  for (const auto& [what, wrong] : wrong_walks) {
    CAPTURE(what);
    const bool all = f06::cache_equals_eager(wrong).holds && f06::batch_becomes_dynamic(wrong).holds &&
                     f06::layout_is_guarded(wrong).holds && f06::in_place_update_keeps_entry(wrong).holds;
    CHECK_FALSE(all);
  }
}

TEST_CASE("a region missing from the profile is an error, not a count of zero") {
  const Profile empty({make_event("other", 0, 10, Category::user_annotation)});
  CHECK_THROWS_WITH_AS(f06::mlp_fused(empty), doctest::Contains("compiled_mlp"), std::invalid_argument);
  CHECK_THROWS_AS(f06::aoti_runs_no_transpose(empty, empty), std::invalid_argument);
  CHECK_THROWS_AS(f06::ops_of_first_call(empty, "eager_linear"), std::invalid_argument);
}
