// Deliberately failing checks. The suite runs this binary and expects doctest to *report* both
// failures and exit 1 — not an abort from LibTorch's CHECK macro (exit 134). See
// workbook_doctest.h.
#include "workbook_doctest.h"

TEST_CASE("a failing CHECK is reported, and the test goes on") {
  const int one = 1, two = 2;
  CHECK(one == two);
  CHECK_EQ(one, two);
  MESSAGE("still running after two failed checks");
}
