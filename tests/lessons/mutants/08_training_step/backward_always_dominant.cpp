// Mutant of exercise 08 — names backward as the dominant phase, as it usually is.
// must fail: the dominant phase is whichever this run spent most in, not the usual suspect
#include "08_training_step.h"

#include <utility>
#include <vector>

#include "workbook/profiler/region.h"
#include "workbook/profiler/session.h"

namespace exercises {

PhaseReport profile_training(const TrainingStep& step, int steps) {
  const std::vector<std::pair<const char*, const std::function<void()>*>> phases{{"zero_grad", &step.zero_grad},
                                                                                 {"forward", &step.forward},
                                                                                 {"loss", &step.loss},
                                                                                 {"backward", &step.backward},
                                                                                 {"optimizer", &step.optimizer}};
  const workbook::Schedule schedule(0, 1, steps);
  workbook::Session session(schedule);
  for (int k = 0; k < schedule.total_steps(); ++k) {
    for (const auto& [name, call] : phases) {
      workbook::Region region(name);
      (*call)();
    }
    session.step();
  }
  PhaseReport report;
  report.profile = session.finish();
  double most = -1;
  for (const auto& [name, call] : phases) {
    const auto ids = report.profile.find(name);
    double sum = 0;
    for (auto id : ids) sum += double(report.profile.total_ns(id)) / 1e3;
    const double mean = ids.empty() ? 0 : sum / double(ids.size());
    report.phase_us[name] = mean;
    if (mean > most) {
      most = mean;
      report.dominant = name;
    }
  }
  report.dominant = "backward";  // backward always costs most, does it not?
  report.backward_over_forward =
      report.phase_us["forward"] > 0 ? report.phase_us["backward"] / report.phase_us["forward"] : 0;
  return report;
}

}  // namespace exercises
