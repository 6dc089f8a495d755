// Lesson 03's findings on hand-made profiles and views: shown, and NOT shown on a counter-example.
#include <doctest/doctest.h>

#include "synthetic_events.h"
#include "workbook/findings/03_linear_t.h"

using testing::make_allocation;
using testing::make_event;
using workbook::Category;
using workbook::Event;
using workbook::Profile;
namespace f03 = workbook::findings03;

namespace {

// Two forwards as C++'s nn::Linear runs a 2-D input: aten::t (a view) then aten::addmm, and a
// contiguous() copy of the weight. `extra` goes into the first forward.
Profile linear_forwards(std::vector<Event> extra = {}) {
  std::vector<Event> e{make_event("linear_forward", 0, 100, Category::user_annotation),
                       make_event("aten::t", 5, 15),
                       make_event("aten::transpose", 6, 14),
                       make_event("aten::as_strided", 7, 13),
                       make_event("aten::addmm", 20, 90),
                       make_event("linear_forward", 200, 300, Category::user_annotation),
                       make_event("aten::t", 205, 215),
                       make_event("aten::addmm", 220, 290),
                       make_event("aten::contiguous", 400, 500),
                       make_allocation(401, 8192),
                       make_event("aten::copy_", 410, 490)};
  for (auto& x : extra) e.push_back(std::move(x));
  return Profile(std::move(e));
}

}  // namespace

TEST_CASE("one addmm per forward, no aten::linear: NOT shown when the forward goes through aten::linear") {
  CHECK(f03::linear_is_one_addmm(linear_forwards()).holds);
  CHECK_FALSE(f03::linear_is_one_addmm(linear_forwards({make_event("aten::linear", 2, 98)})).holds);
  CHECK_FALSE(f03::linear_is_one_addmm(Profile{}).holds);  // nothing recorded shows nothing
}

TEST_CASE("the bias goes into addmm: NOT shown with an aten::add_ beneath a forward") {
  CHECK(f03::bias_inside_addmm(linear_forwards()).holds);
  CHECK_FALSE(f03::bias_inside_addmm(linear_forwards({make_event("aten::add_", 92, 95)})).holds);
}

TEST_CASE("W.t() is a view: NOT shown for a copy, another pointer, or unswapped strides") {
  int storage[8];
  f03::Transpose view{true, storage, storage, {32, 1}, {1, 32}};
  CHECK(f03::transpose_is_view(view).holds);
  auto copy = view;
  copy.same_storage = false;
  CHECK_FALSE(f03::transpose_is_view(copy).holds);
  auto moved = view;
  moved.transpose_data = storage + 1;
  CHECK_FALSE(f03::transpose_is_view(moved).holds);
  auto unswapped = view;
  unswapped.transpose_strides = {32, 1};
  CHECK_FALSE(f03::transpose_is_view(unswapped).holds);
}

TEST_CASE("only views beneath aten::t: NOT shown with a copy or an allocation beneath it") {
  CHECK(f03::t_runs_only_views(linear_forwards()).holds);
  CHECK_FALSE(f03::t_runs_only_views(linear_forwards({make_event("aten::clone", 8, 12)})).holds);
  CHECK_FALSE(f03::t_runs_only_views(linear_forwards({make_allocation(9, 64)})).holds);
  CHECK_FALSE(f03::t_runs_only_views(Profile({make_event("aten::addmm", 0, 10)})).holds);  // no aten::t at all
}

TEST_CASE("contiguous copies the weight: NOT shown without the copy_ or with a smaller allocation") {
  CHECK(f03::contiguous_copies_the_weight(linear_forwards(), 8192).holds);
  CHECK_FALSE(f03::contiguous_copies_the_weight(linear_forwards(), 16384).holds);
  const Profile no_copy({make_event("aten::contiguous", 0, 10), make_allocation(1, 8192)});
  CHECK_FALSE(f03::contiguous_copies_the_weight(no_copy, 8192).holds);
}
