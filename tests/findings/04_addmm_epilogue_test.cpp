// Lesson 04's findings on hand-made profiles: each shown where the run bears it out, NOT shown
// where it does not, and a missing forward is an error, never a zero.
#include <doctest/doctest.h>

#include "synthetic_events.h"
#include "workbook/findings/04_addmm_epilogue.h"

using testing::make_allocation;
using testing::make_event;
using workbook::Category;
using workbook::Event;
using workbook::Profile;
namespace f04 = workbook::findings04;

namespace {

// Three forwards as LibTorch 1.13 runs them on the CPU; `linear_add` puts an aten::add in nn_linear.
Profile forwards(bool linear_add = false, bool fused_copy = true, bool unfused_extra_buffer = true) {
  std::vector<Event> e{make_event("unfused", 0, 100, Category::user_annotation),
                       make_event("aten::mm", 10, 50),
                       make_allocation(11, 4096),
                       make_event("aten::add", 60, 90),
                       make_event("fused", 200, 300, Category::user_annotation),
                       make_event("aten::addmm", 210, 290),
                       make_allocation(211, 4096),
                       make_event("nn_linear", 400, 500, Category::user_annotation),
                       make_event("aten::addmm", 410, 490)};
  if (unfused_extra_buffer) e.push_back(make_allocation(61, 4096));
  if (fused_copy) e.push_back(make_event("aten::copy_", 215, 230));
  if (linear_add) e.push_back(make_event("aten::add", 495, 499));
  return Profile(std::move(e));
}

}  // namespace

TEST_CASE("the bias is inside addmm and nn::Linear: shown, and NOT shown when nn_linear runs an add") {
  CHECK(f04::bias_inside_the_op(forwards()).holds);
  const auto counter = f04::bias_inside_the_op(forwards(/*linear_add=*/true));
  CHECK_FALSE(counter.holds);
  CHECK(counter.evidence == "aten::add per forward: unfused 1, fused 0, nn_linear 1");
}

TEST_CASE("one more [M, N] buffer for the unfused forward: NOT shown when both allocate alike") {
  CHECK(f04::one_more_output_buffer(forwards(), 4096).holds);
  CHECK_FALSE(f04::one_more_output_buffer(forwards(false, true, /*unfused_extra_buffer=*/false), 4096).holds);
  // Smaller allocations are not [M, N] buffers.
  CHECK_FALSE(f04::one_more_output_buffer(forwards(), 8192).holds);
}

TEST_CASE("addmm copies the bias into its output: NOT shown without the copy_ beneath it") {
  CHECK(f04::bias_copied_into_output(forwards()).holds);
  CHECK_FALSE(f04::bias_copied_into_output(forwards(false, /*fused_copy=*/false)).holds);
}

TEST_CASE("a forward missing from the profile is an error, not a count of zero") {
  const Profile without_linear({make_event("unfused", 0, 100, Category::user_annotation),
                                make_event("fused", 200, 300, Category::user_annotation)});
  CHECK_THROWS_WITH_AS(f04::bias_inside_the_op(without_linear), doctest::Contains("nn_linear"), std::invalid_argument);
}
