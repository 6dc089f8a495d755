// Lesson 01's sentences on hand-made profiles and gaps: each says what the numbers show, either way.
#include <doctest/doctest.h>

#include "synthetic_events.h"
#include "workbook/findings/01_matmul_add.h"

using testing::make_event;
using workbook::Profile;
namespace f01 = workbook::findings01;

TEST_CASE("matmul's self time against its total: 'almost all in aten::mm' only when it is") {
  // aten::matmul [0, 100] us with aten::mm [5, 95]: 90% in mm.
  const Profile mostly_mm({make_event("aten::matmul", 0, 100000), make_event("aten::mm", 5000, 95000)});
  const std::string a = f01::matmul_self_against_total(mostly_mm);
  CHECK(a.find("90%") != std::string::npos);
  CHECK(a.find("almost all of it is spent in aten::mm") != std::string::npos);
  // aten::mm only 40% of it: NOT "almost all".
  const Profile dispatch_heavy({make_event("aten::matmul", 0, 100000), make_event("aten::mm", 50000, 90000)});
  const std::string b = f01::matmul_self_against_total(dispatch_heavy);
  CHECK(b.find("40%") != std::string::npos);
  CHECK(b.find("almost all") == std::string::npos);
  CHECK(b.find("the rest is aten::matmul's self time") != std::string::npos);
  CHECK_THROWS_AS(f01::matmul_self_against_total(Profile({make_event("aten::mm", 0, 10)})), std::invalid_argument);
}

TEST_CASE("matmul's share in aten::mm is the median per call: one slow call does not decide it") {
  // Two calls 40% in mm, one slow call 99% in mm: pooled that is 96%, per call the median is 40%.
  const Profile p({make_event("aten::matmul", 0, 100000), make_event("aten::mm", 50000, 90000),
                   make_event("aten::matmul", 200000, 300000), make_event("aten::mm", 250000, 290000),
                   make_event("aten::matmul", 400000, 10400000), make_event("aten::mm", 400000, 10300000)});
  const std::string s = f01::matmul_self_against_total(p);
  CHECK(s.find("holds 40% of aten::matmul's total (the median of 3 calls, 40-99%)") != std::string::npos);
  CHECK(s.find("almost all") == std::string::npos);
}

TEST_CASE(
    "a cold first step: shown when its gap is over twice the later median and 10 us longer, NOT shown otherwise") {
  CHECK(f01::first_step_was_cold({30.8, 0.5, 0.6, 0.4}).holds);
  CHECK(f01::first_step_was_cold({10.6, 0.5, 0.6}).holds);
  CHECK_FALSE(f01::first_step_was_cold({2.1, 0.6, 0.5}).holds);   // 3.8x, but 1.5 us apart
  CHECK_FALSE(f01::first_step_was_cold({10.4, 0.5, 0.6}).holds);  // 9.85 us apart
  const auto warm = f01::first_step_was_cold({1.0, 0.6, 0.5});
  CHECK_FALSE(warm.holds);
  CHECK(warm.evidence == "gap before aten::matmul: first recorded step 1.0 us, median of the later ones 0.6 us");
  CHECK_FALSE(f01::first_step_was_cold({5.0}).holds);
}

TEST_CASE("ops directly inside a region: its operator children, not their children, not memory records") {
  using testing::make_event;
  using workbook::Category;
  // matmul_add holds aten::matmul (with aten::mm beneath it), aten::add and a memory record.
  workbook::Event alloc = make_event("[memory]", 22000, 22000, Category::memory);
  alloc.bytes = 64;
  const workbook::Profile lesson({make_event("matmul_add", 0, 100000, Category::user_annotation),
                                  make_event("aten::matmul", 10000, 60000), make_event("aten::mm", 20000, 55000), alloc,
                                  make_event("aten::add", 60000, 90000)});
  CHECK(workbook::findings01::ops_directly_inside(lesson, "matmul_add") == 2);
  // Counter-example: an extra op beside them (a copy of the bias) makes three.
  const workbook::Profile three({make_event("matmul_add", 0, 100000, Category::user_annotation),
                                 make_event("aten::clone", 1000, 9000), make_event("aten::matmul", 10000, 60000),
                                 make_event("aten::mm", 20000, 55000), make_event("aten::add", 60000, 90000)});
  CHECK(workbook::findings01::ops_directly_inside(three, "matmul_add") == 3);
  CHECK_THROWS_AS(workbook::findings01::ops_directly_inside(three, "missing"), std::invalid_argument);
}
