#pragma once
// Building blocks for toolkit tests on synthetic event trees.
#include "workbook/profile.h"

namespace testing {

/// An event on host thread `thread`, from `start` to `end` nanoseconds.
inline workbook::Event make_event(const char* name, std::int64_t start, std::int64_t end,
                                  workbook::Category category = workbook::Category::cpu_op, std::uint64_t thread = 1) {
  workbook::Event e;
  e.name = name;
  e.start_ns = start;
  e.end_ns = end;
  e.category = category;
  e.thread = thread;
  return e;
}

}  // namespace testing
