#include <doctest/doctest.h>

#include <stdexcept>

#include "workbook/profiler/session.h"

using A = workbook::Schedule::Action;

TEST_CASE("the article's schedule: wait 1, warmup 1, active 3") {
  const workbook::Schedule s(1, 1, 3);
  CHECK(s.total_steps() == 5);
  CHECK(s.action(0) == A::none);
  CHECK(s.action(1) == A::warmup);
  CHECK(s.action(2) == A::record);
  CHECK(s.action(3) == A::record);
  CHECK(s.action(4) == A::record_and_save);
  CHECK(s.action(5) == A::none);  // repeat=1: done
}

TEST_CASE("skip_first and repeat follow Python's arithmetic") {
  const workbook::Schedule s(1, 0, 2, 2, 3);
  CHECK(s.total_steps() == 3 + 2 * 3);
  CHECK(s.action(2) == A::none);
  CHECK(s.action(3) == A::none);
  CHECK(s.action(4) == A::record);
  CHECK(s.action(5) == A::record_and_save);
  CHECK(s.action(6) == A::none);
  CHECK(s.action(8) == A::record_and_save);
  CHECK(s.action(9) == A::none);
  const workbook::Schedule forever(0, 0, 1, 0);
  CHECK(forever.total_steps() == 0);
  CHECK(forever.action(1000) == A::record_and_save);
}

TEST_CASE("record_all records every step and never saves early") {
  const auto all = workbook::Schedule::record_all();
  CHECK(all.action(0) == A::record);
  CHECK(all.action(123456) == A::record);
  CHECK(all.total_steps() == 0);
}

TEST_CASE("invalid schedules are refused with the numbers in the message") {
  CHECK_THROWS_AS(workbook::Schedule(1, 1, 0), std::invalid_argument);
  CHECK_THROWS_WITH_AS(workbook::Schedule(-1, 1, 1), doctest::Contains("wait=-1"), std::invalid_argument);
}
