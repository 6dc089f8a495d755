#pragma once
// Recording a few forwards for the exercise checks: wait 1, warm up 1, then `active` recorded
// steps, each running `forward` once inside a region named `region`.
#include <functional>
#include <string>

#include "workbook/profiler/region.h"
#include "workbook/profiler/session.h"

namespace testing {

inline workbook::Profile record_forwards(const std::string& region, const std::function<void()>& forward,
                                         workbook::SessionOptions options = {}, int active = 3) {
  const workbook::Schedule schedule(1, 1, active);
  workbook::Session session(schedule, std::move(options));
  for (int step = 0; step < schedule.total_steps(); ++step) {
    {
      workbook::Region r(region);
      forward();
    }
    session.step();
  }
  return session.finish();
}

}  // namespace testing
