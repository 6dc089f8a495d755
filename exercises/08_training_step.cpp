// Exercise 08 — see 08_training_step.h for the contract, `./workbook hint 8` for a hint.
// Until you write it, the function below throws "not implemented yet" and the checks fail.
#include "08_training_step.h"

#include "workbook/lesson/not_implemented.h"

namespace exercises {

PhaseReport profile_training(const TrainingStep& step, int steps) {
  // TODO: a session with a warm-up step, a region per phase, then the report from the profile.
  (void)step, (void)steps;
  throw workbook::NotImplemented("exercise 08: profile_training (exercises/08_training_step.cpp)");
}

}  // namespace exercises
