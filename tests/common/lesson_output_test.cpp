// Lesson output: a claim the run does not bear out is counted, and a strict run fails on it.
#include "workbook_doctest.h"

#include <cstdlib>

#include "workbook/lesson/lesson_cli.h"
#include "workbook/lesson/lesson_output.h"

TEST_CASE("claims: shown ones pass, a claim the run does not show is counted and fails a strict run") {
  const int before = workbook::claims_not_shown();
  CHECK(workbook::claim(true, "two is two", "2 == 2"));
  CHECK(workbook::claims_not_shown() == before);
  CHECK_FALSE(workbook::claim(false, "one is two", "1 != 2"));
  CHECK(workbook::claims_not_shown() == before + 1);
  ::setenv("WORKBOOK_STRICT_CLAIMS", "1", 1);
  CHECK(workbook::run_reporting_errors("probe", [] { return 0; }) == 3);
  ::setenv("WORKBOOK_STRICT_CLAIMS", "0", 1);
  CHECK(workbook::run_reporting_errors("probe", [] { return 0; }) == 0);
  ::unsetenv("WORKBOOK_STRICT_CLAIMS");
}
