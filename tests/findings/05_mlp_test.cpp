// Lesson 05's finding on a hand-made GeGLU forward: shown, and NOT shown with an op too many or missing.
#include <doctest/doctest.h>

#include "synthetic_events.h"
#include "workbook/findings/05_mlp.h"

using testing::make_event;
using workbook::Category;
using workbook::Event;
using workbook::Profile;

namespace {

Profile geglu_forward(std::vector<Event> extra = {}, bool with_mul = true) {
  std::vector<Event> e{make_event("mlp_forward", 0, 100, Category::user_annotation), make_event("aten::mm", 1, 20),
                       make_event("aten::gelu", 21, 30), make_event("aten::mm", 31, 50),
                       make_event("aten::mm", 71, 99)};
  if (with_mul) e.push_back(make_event("aten::mul", 51, 70));
  for (auto& x : extra) e.push_back(std::move(x));
  return Profile(std::move(e));
}

}  // namespace

TEST_CASE("the GeGLU forward's 5 compute ops: NOT shown with a fourth GEMM or without the mul") {
  const Profile p = geglu_forward();
  CHECK(workbook::findings05::geglu_runs_five_compute_ops(p, p.find("mlp_forward").at(0)).holds);
  const Profile four_gemms = geglu_forward({make_event("aten::mm", 60, 65)});
  CHECK_FALSE(
      workbook::findings05::geglu_runs_five_compute_ops(four_gemms, four_gemms.find("mlp_forward").at(0)).holds);
  const Profile no_mul = geglu_forward({}, false);
  const auto counter = workbook::findings05::geglu_runs_five_compute_ops(no_mul, no_mul.find("mlp_forward").at(0));
  CHECK_FALSE(counter.holds);
  CHECK(counter.evidence == "aten::mm x3, aten::gelu x1, aten::mul x0");
}

TEST_CASE("the GEMMs of one forward: aten::mm and aten::addmm beneath it, none outside") {
  using workbook::findings05::gemms_in_forward;
  const Profile three = geglu_forward();
  CHECK(gemms_in_forward(three, three.find("mlp_forward").front()) == 3);
  // Counter-example: an addmm (a Linear with a bias) counts, a GEMM after the forward does not.
  const Profile four = geglu_forward({make_event("aten::addmm", 72, 90), make_event("aten::mm", 200, 220)});
  CHECK(gemms_in_forward(four, four.find("mlp_forward").front()) == 4);
}
