#include <stdexcept>
#include <string>

#include "workbook/profiler/session.h"

namespace workbook {

Schedule::Schedule(int wait_, int warmup_, int active_, int repeat_, int skip_first_)
    : wait(wait_), warmup(warmup_), active(active_), repeat(repeat_), skip_first(skip_first_) {
  if (wait < 0 || warmup < 0 || repeat < 0 || skip_first < 0 || active < 1)
    throw std::invalid_argument(
        "schedule: wait, warmup, repeat and skip_first must be >= 0 and active >= 1 (got wait=" + std::to_string(wait) +
        " warmup=" + std::to_string(warmup) + " active=" + std::to_string(active) +
        " repeat=" + std::to_string(repeat) + " skip_first=" + std::to_string(skip_first) + ")");
}

Schedule Schedule::record_all() {
  Schedule s(0, 0, 1, 0);
  s.record_all_ = true;
  return s;
}

Schedule::Action Schedule::action(int step) const {
  if (record_all_) return Action::record;
  if (step < skip_first) return Action::none;
  step -= skip_first;
  const int cycle = wait + warmup + active;
  if (repeat > 0 && step / cycle >= repeat) return Action::none;
  const int at = step % cycle;
  if (at < wait) return Action::none;
  if (at < wait + warmup) return Action::warmup;
  return at < cycle - 1 ? Action::record : Action::record_and_save;
}

int Schedule::total_steps() const {
  return repeat == 0 || record_all_ ? 0 : skip_first + repeat * (wait + warmup + active);
}

}  // namespace workbook
